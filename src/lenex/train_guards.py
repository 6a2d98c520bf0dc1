"""A training on a cluster (issue 36): one trainer per workdir, and SIGTERM saves before exit.

`WorkdirLock`: `<workdir>/train.lock` records the holder's pid and host, created exclusively.
A second trainer (an orphan of a killed Snakemake, a rerun started beside it) is refused with
one line naming the holder. A lock whose holder is gone is taken over with a notice: on this
host, a pid that no longer runs; on another host (a requeued SLURM job), a lock not refreshed
for `STALE_AFTER_S` (the holder refreshes it at most every `REFRESH_S` while training).

`Termination`: SIGTERM (what SLURM sends at a time limit, and `kill`) only sets a flag; the
training loop saves its state after the step in progress and stops with one line, so a rerun
resumes at that step, losing none.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from pathlib import Path

from .files import process_runs

log = logging.getLogger("lenex.train")
LOCK_NAME = "train.lock"
REFRESH_S = 60
STALE_AFTER_S = 15 * 60


class WorkdirInUse(RuntimeError):
    """Another trainer holds the workdir."""


class Terminated(RuntimeError):
    """SIGTERM arrived; the state was saved (lenex.cli prints the one line, status 2)."""


class WorkdirLock:
    def __init__(self, workdir):
        self.path = Path(workdir) / LOCK_NAME
        self.refreshed = 0.0

    def holder(self) -> dict:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}  # half-written by a holder killed while creating it, or gone meanwhile

    def _stale(self, holder: dict) -> str | None:
        """Why the lock's holder is gone, or None while it may still run."""
        try:
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return "gone"
        if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
            return None if process_runs(holder["pid"]) else f"its pid {holder['pid']} no longer runs"
        if age > STALE_AFTER_S:
            return f"not refreshed for {age / 60:.0f} min"
        return None

    def acquire(self) -> "WorkdirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mine = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()})
        for _ in range(2):  # a stale lock is removed once, then the creation is tried again
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self.holder()
                why = self._stale(holder)
                if why is None:
                    raise WorkdirInUse(
                        f"{self.path.parent} is in use by a trainer (pid {holder.get('pid', '?')} on host "
                        f"{holder.get('host', '?')}, {self.path}): a second one would mix their states; wait "
                        "for it, or stop it, or delete the lock if that process is gone") from None
                log.warning("took over %s from pid %s on host %s: %s", self.path, holder.get("pid", "?"),
                            holder.get("host", "?"), why)
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(mine + "\n")
            self.refreshed = time.time()
            return self
        raise WorkdirInUse(f"{self.path}: another trainer took the lock over at the same time")

    def refresh(self) -> None:
        """Touch the lock (at most every REFRESH_S): a holder on another host is alive while it does."""
        if time.time() - self.refreshed >= REFRESH_S:
            os.utime(self.path)
            self.refreshed = time.time()

    def release(self) -> None:
        if self.holder().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)


class Guards:
    """One training's guards: the workdir lock (held by rank 0 alone) and the SIGTERM flag."""

    def __init__(self, workdir, is_main: bool = True):
        self.lock = WorkdirLock(workdir) if is_main else None
        self.termination = Termination()

    def __enter__(self) -> "Guards":
        if self.lock is not None:
            self.lock.acquire()
        self.termination.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.termination.__exit__(*exc)
        if self.lock is not None:
            self.lock.release()

    def tick(self) -> None:
        """After every step: the lock shows its holder is alive."""
        if self.lock is not None:
            self.lock.refresh()

    def stop_requested(self, ctx) -> bool:
        """SIGTERM arrived (on any rank: all ranks stop at the same step, or collectives would hang)."""
        from .distributed import mean_over_ranks

        asked = self.termination.requested
        return mean_over_ranks(ctx, float(asked)) > 0 if ctx.distributed else asked


class Termination:
    """Within `with Termination() as term:`, SIGTERM sets `term.requested` instead of killing
    the process (only in the main thread, where Python handles signals)."""

    def __init__(self):
        self.requested = False
        self._previous = None

    def _handle(self, signum, frame) -> None:
        self.requested = True
        log.warning("SIGTERM: saving the training state after the step in progress, then stopping")

    def __enter__(self) -> "Termination":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
