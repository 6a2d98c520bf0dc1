"""A training on a cluster, which may start it twice or stop it at a time limit: one trainer per
workdir, and a stop signal saves before exit.

`WorkdirLock`: `<workdir>/train.lock` records the holder's pid, host and SLURM job, created
exclusively. A second trainer (an orphan of a killed Snakemake, a rerun started beside it) is
refused with one line naming the holder. A lock whose holder is gone is taken over with a notice:
on this host, a pid that no longer runs; on another host (a job cut by SIGKILL and rerun
elsewhere), a holder whose SLURM job is this very job (requeued) or no longer in the queue
(`squeue`), else a lock not refreshed for `STALE_AFTER_S`. The holder refreshes it every
`REFRESH_S` from a thread of its own, so a long step, evaluation or save never makes it look
stale, and a dead holder's lock is stale within minutes, not the quarter hour it once was.

`Termination`: SIGTERM (what SLURM sends at a time limit, and `kill`), SIGINT (Ctrl-C) and SIGHUP
only set a flag; the training loop saves its state after the step in progress and stops with one
line naming the signal, so a rerun resumes at that step, losing none.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from ..files import process_runs

log = logging.getLogger("lenex.training.train")
LOCK_NAME = "train.lock"
REFRESH_S = 30
STALE_AFTER_S = 4 * REFRESH_S  # three missed heartbeats: the holder is gone
SLURM_JOB_ENV = "SLURM_JOB_ID"


def slurm_job_queued(job_id: str, runner=subprocess.run) -> bool | None:
    """Whether SLURM still lists job `job_id` (pending, running or finishing), by `squeue`; None
    where there is no squeue or it does not answer (then only the lock's age can tell)."""
    if not shutil.which("squeue") and runner is subprocess.run:
        return None
    try:
        done = runner(["squeue", "--noheader", "--jobs", str(job_id), "--format", "%T"], capture_output=True,
                      text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        # squeue exits non-zero for a job id it no longer knows ("Invalid job id specified")
        return False if "invalid job id" in (done.stderr or "").lower() else None
    return bool(done.stdout.strip())


class WorkdirInUse(RuntimeError):
    """Another trainer holds the workdir."""


class Terminated(RuntimeError):
    """A stop signal arrived; the state was saved (lenex.cli prints the one line, status 2)."""


class WorkdirLock:
    def __init__(self, workdir, environ=os.environ, queued=slurm_job_queued):
        self.path = Path(workdir) / LOCK_NAME
        self.refreshed = 0.0
        self.slurm_job = environ.get(SLURM_JOB_ENV) or None
        self.queued = queued
        self._heartbeat: threading.Event | None = None

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
        job = holder.get("slurm_job")
        if job and job == self.slurm_job:
            return f"its SLURM job {job} is this one, requeued"
        if job and self.queued(job) is False:
            return f"its SLURM job {job} is no longer in the queue"
        if age > STALE_AFTER_S:
            return f"not refreshed for {age / 60:.0f} min"
        return None

    def acquire(self) -> "WorkdirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mine = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                           "slurm_job": self.slurm_job})
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
            try:
                os.utime(self.path)
            except FileNotFoundError:
                return  # released meanwhile
            self.refreshed = time.time()

    def start_heartbeat(self) -> None:
        """Refresh the lock every REFRESH_S from a daemon thread until release()."""
        stop = self._heartbeat = threading.Event()

        def beat():
            while not stop.wait(REFRESH_S):
                self.refresh()

        threading.Thread(target=beat, name="lenex-lock-heartbeat", daemon=True).start()

    def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.set()
        if self.holder().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)


class Guards:
    """One training's guards: the workdir lock (held by rank 0 alone) and the SIGTERM flag (which
    the trainer sends to the other ranks in its loss all-reduce: lenex.training.speed.StepStats)."""

    def __init__(self, workdir, is_main: bool = True):
        self.lock = WorkdirLock(workdir) if is_main else None
        self.termination = Termination()

    def __enter__(self) -> "Guards":
        if self.lock is not None:
            self.lock.acquire().start_heartbeat()
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


#: Every way a run is stopped from outside: SIGTERM (`kill`, `scancel`, SLURM's time limit through
#: the profile's `--signal=TERM@N`, Snakemake stopping a job), SIGINT (Ctrl-C, which the terminal
#: sends to Snakemake and its jobs alike) and SIGHUP (the terminal or ssh session closed).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Termination:
    """Within `with Termination() as term:`, a stop signal (STOP_SIGNALS) sets `term.requested`
    instead of ending the process, and `term.signal_name` says which (only in the main thread,
    where Python handles signals). A second Ctrl-C stops at once, as Python's KeyboardInterrupt,
    without saving: the way out of a save that hangs."""

    def __init__(self):
        self.requested = False
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum, frame) -> None:
        name = signal.Signals(signum).name
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not self.requested:
            self.requested, self.signal_name = True, name
            again = " (Ctrl-C again stops at once, unsaved)" if signum == signal.SIGINT else ""
            log.warning(f"{name}: saving the training state after the step in progress, then stopping{again}")

    @property
    def stopped_by(self) -> str:
        """What stopped the run, for its last line: the signal, or (a rank that got none, told in
        the loss all-reduce) another rank's."""
        return self.signal_name or "a stop signal to another rank"

    def __enter__(self) -> "Termination":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                # An ignored SIGINT or SIGHUP stays ignored (`nohup`, a job started with `&`): the
                # user asked the run to outlive the terminal. SIGTERM is taken even where ignored: a
                # GPU job's shell ignores it (KEEP_SHELL) so that the trainer alone handles it.
                if signum != signal.SIGTERM and signal.getsignal(signum) is signal.SIG_IGN:
                    continue
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous = {}
