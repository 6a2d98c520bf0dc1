"""Start a lenex entry point without paying for torch's import each time: a fork server.

    python -m lenex.pipeline.launch lenex.training.train --model-config ...     # what a rule runs (a job)
    python -m lenex.pipeline.launch --serve SOCKET                      # what a local run starts once

A job is `python -m lenex.pipeline.launch <module> <args>`. Where `LENEX_FORK_SERVER` names the socket of a
running server (the Snakefile's `onstart` starts one for a local run and sets it), the job hands
its command, environment, working directory, `sys.path` and its stdin/stdout/stderr to the server,
which forks a child that already has torch (and `torch._dynamo`, which every optimizer imports)
loaded; the child runs the module as `python -m` would, and its exit status is the job's. Without a
server, or with one that cannot take the job, the job simply becomes `python -m <module> <args>`.

Why: a job that runs a model spends about a second importing torch, two for a training job, which
at the `tiny` preset is more than the work (docs/pipeline-speed.md). What the child does not
inherit: any lenex module (dropped before the job runs, so the job imports the code on its own
`sys.path`), any Python thread (the server runs none, and no torch computation: torch's own
thread pools are made in the child, as in a DataLoader worker forked after `import torch`).
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys
from pathlib import Path

SOCKET_ENV = "LENEX_FORK_SERVER"
_FDS = 3  # stdin, stdout, stderr


def _send(conn: socket.socket, payload: dict, fds=()) -> None:
    """One message: its length (8 bytes) and its JSON; `fds` ride along with its first byte."""
    data = json.dumps(payload).encode()
    message = len(data).to_bytes(8, "big") + data
    if fds:
        sent = conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        conn.sendall(message[sent:])
    else:
        conn.sendall(message)


def _receive(conn: socket.socket, buffer: bytearray, with_fds: bool = False) -> tuple[dict | None, list[int]]:
    """The next message (None once the peer is gone) and the descriptors that came with it;
    bytes of a following message stay in `buffer`."""
    fds = array.array("i")
    while len(buffer) < 8 or len(buffer) < 8 + int.from_bytes(buffer[:8], "big"):
        if with_fds and not fds:
            data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(_FDS * fds.itemsize))
            for level, kind, raw in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(raw[: len(raw) - len(raw) % fds.itemsize])
        else:
            data = conn.recv(1 << 16)
        if not data:
            return None, list(fds)
        buffer += data
    size = int.from_bytes(buffer[:8], "big")
    payload = json.loads(bytes(buffer[8 : 8 + size]))
    del buffer[: 8 + size]
    return payload, list(fds)


# --- the job's side -------------------------------------------------------------------------


def run_job(module: str, args: list[str]) -> int | None:
    """Run `python -m module args` through the server, or (returns None) where there is none."""
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        _send(conn, {"module": module, "args": args, "env": dict(os.environ), "cwd": os.getcwd(),
                     "path": sys.path, "executable": sys.executable}, fds=(0, 1, 2))
        buffer = bytearray()
        reply, _ = _receive(conn, buffer)
    except OSError:
        conn.close()
        return None
    if reply is None or "pid" not in reply:  # refused (another interpreter) or gone
        conn.close()
        return None
    child = reply["pid"]

    def forward(signum, _frame):  # Snakemake stopping the job stops the job (its process group)
        for kill in (os.killpg, os.kill):  # its group, or itself before it made the group
            try:
                kill(child, signum)
                return
            except ProcessLookupError:
                continue

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    reply, _ = _receive(conn, buffer)
    conn.close()
    if reply is None:  # the child died without a word (killed): say so, as a shell would
        print(f"lenex.pipeline.launch: {module} (pid {child}) ended without an exit status", file=sys.stderr)
        return 1
    return int(reply["status"])


def foreign_code(cwd=None) -> str | None:
    """Why a job started in a lenex checkout (`cwd`, a rule's working directory) would run another
    checkout's code: the lenex imported here is not `cwd`/src/lenex (a copied checkout whose venv
    has the original installed editable, a cluster node's other venv). None where it is, or where
    `cwd` holds no src/lenex (a workflow folder that runs the installed code on purpose)."""
    cwd = Path.cwd() if cwd is None else Path(cwd)
    ours = cwd / "src" / "lenex"
    if not (ours / "__init__.py").is_file() or not (cwd / "config" / "config.yaml").is_file():
        return None
    # The package folder, resolved (not this file: a checkout may link its files one by one).
    imported = Path(sys.modules["lenex"].__file__).parent.resolve()
    if imported == ours.resolve():
        return None
    return (f"Python imports lenex from {imported}, not this checkout's {ours}: run `pip install -e .` in {cwd} "
            f"(with the venv the jobs run in), or set PYTHONPATH={ours.parent}")


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"] and len(argv) == 2:
        serve(argv[1])
        return
    if not argv or argv[0].startswith("-"):
        print("usage: python -m lenex.pipeline.launch <module> [args ...] | --serve SOCKET", file=sys.stderr)
        sys.exit(2)
    problem = foreign_code()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(1)
    status = run_job(argv[0], argv[1:])
    if status is None:
        os.execv(sys.executable, [sys.executable, "-m", argv[0], *argv[1:]])
    sys.exit(status)


# --- the server's side ----------------------------------------------------------------------


def start_server(folder, python: str = sys.executable, log=None, **popen) -> "subprocess.Popen":
    """Start `python -m lenex.pipeline.launch --serve <folder>/socket` in its own session (what the
    workflow's onstart, the pipeline benchmark and the tests run); jobs find it through
    SOCKET_ENV=socket_path(folder) once it accepts. `log`: a file for its output (default none)."""
    import subprocess  # here, not at the top: a job's own start-up stays at what it needs

    return subprocess.Popen([python, "-m", "lenex.pipeline.launch", "--serve", socket_path(folder)],
                            stdin=subprocess.DEVNULL, stdout=log or subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True, **popen)


def socket_path(folder) -> str:
    return os.path.join(folder, "socket")


def wait_until_serving(server, folder, timeout: float = 120.0) -> str:
    """The socket of a server start_server started, once it accepts jobs; one error if it never does."""
    import time

    path, deadline = socket_path(folder), time.monotonic() + timeout
    while not os.path.exists(path):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the fork server did not come up ({path})")
        time.sleep(0.1)
    return path


def _stop_when_the_job_is_gone(conn: socket.socket) -> None:
    """The job process waits on the connection until the child reports; if it is killed outright
    (SIGKILL: no signal to forward), the connection closes and the child stops too."""
    import threading

    def watch():
        try:
            gone = conn.recv(1) == b""
        except OSError:
            gone = True
        if gone:
            os.killpg(0, signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="lenex-launch-watch").start()


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the forked child: become the job, run the module, report the status, never return."""
    status = 1
    try:
        for target, fd in enumerate(fds[:_FDS]):  # the server's own 0-2 are open: fd > 2 here
            os.dup2(fd, target)
            os.close(fd)
        os.setpgid(0, 0)  # the job's own process group: a signal to it reaches its children too
        _stop_when_the_job_is_gone(conn)
        for name in list(sys.modules):
            if name == "lenex" or name.startswith("lenex."):
                del sys.modules[name]
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = request["path"]
        sys.argv = [request["module"], *request["args"]]
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        import runpy

        try:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            status = 0
        except SystemExit as done:
            code = done.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - the job's traceback goes to its log, as python -m would print it
            import traceback

            traceback.print_exc()
            status = 1
    finally:
        try:  # what the interpreter does at exit: atexit handlers (logging's flush among them), flush
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the status must still be reported
            pass
        try:
            _send(conn, {"status": status})
        except OSError:
            pass
        os._exit(status)


def serve(path: str, idle_seconds: float = 600.0) -> None:
    """Accept jobs on the Unix socket `path` until the process that started it is gone, or no job
    came for `idle_seconds`; fork one child per job."""
    import select
    import threading
    import time

    import torch  # noqa: F401 - what every job would import first
    import torch._dynamo  # noqa: F401 - what torch.optim imports on an optimizer's first use

    parent = os.getppid()
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.replace(path + ".tmp", path)  # jobs see the socket only once it accepts
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped by the run: remove the socket
    last = time.monotonic()
    try:
        while os.getppid() == parent and time.monotonic() - last < idle_seconds:
            while True:  # reap finished children
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
            ready, _, _ = select.select([listener], [], [], 1.0)
            if not ready:
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            try:
                request, fds = _receive(conn, bytearray(), with_fds=True)
            except (OSError, ValueError):
                conn.close()
                continue
            if request is None or request.get("executable") != sys.executable or len(fds) < _FDS or threading.active_count() > 1:
                _send(conn, {"refused": "another interpreter, no descriptors, or a threaded server"})
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:  # the child never returns into this loop, whatever happens
                try:
                    listener.close()
                    _send(conn, {"pid": os.getpid()})
                    _child(conn, request, fds)
                finally:
                    os._exit(1)
            for fd in fds:
                os.close(fd)
            conn.close()
    finally:
        listener.close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    main()
