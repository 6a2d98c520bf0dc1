"""One finished `tiny` run that the end-to-end tests share (issue 47).

CI runs `make run` before `make test`, so the checkout's results/tiny is complete when the tests
start, and a test that needs a finished run reads it or works on a copy of it instead of training
its own scratch pipeline. `make test` alone builds it first, once: the same `snakemake --cores 2` as
`make run`, under a lock so that two pytest-xdist workers never build it side by side.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from filelock import FileLock
from subprocess_env import env_with_venv

REPO = Path(__file__).resolve().parents[1]
NOTHING_TO_DO = "Nothing to be done"
LOCK = REPO / ".snakemake" / "lenex-tests-tiny-build.lock"


def _snakemake(*args: str, cwd: Path = REPO, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env_with_venv(),
                          capture_output=True, text=True, timeout=timeout)


def finished_tiny() -> Path:
    """The checkout, with its default run (every paper whole at `tiny`) complete: built now if a
    dry run finds work to do. Returns the checkout's root."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(LOCK)):
        dry = _snakemake("-n", "--cores", "2")
        assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
        if NOTHING_TO_DO not in dry.stdout + dry.stderr:
            run = _snakemake("--cores", "2")
            assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    return REPO


def tiny_copy(dest: Path, config: bool = False, models: tuple[str, ...] | None = None) -> Path:
    """A scratch workflow at `dest` holding a copy of the finished tiny run, so that Snakemake there
    has nothing to do until a test changes something: results/tiny copied with its timestamps,
    Snakemake's records of its jobs (.snakemake/metadata) and lenex's stamps copied, the fetched
    resources/ linked (read only by prepare jobs). The code and rules are linked to the checkout's;
    `config=True` copies config/ so the test may edit it; `models` (paper names) copies only those
    papers' models (most of the run's bytes), for a test whose targets read no other."""
    repo = finished_tiny()
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "workflow", "results/scale-study", "resources", *(() if config else ("config",))):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).symlink_to(repo / name)
    if config:
        shutil.copytree(repo / "config", dest / "config")
    tiny = repo / "results" / "tiny"

    def left_out(folder, names):
        return [n for n in names if models is not None and Path(folder) == tiny / "models" and n not in models]

    shutil.copytree(tiny, dest / "results" / "tiny", symlinks=True, ignore=left_out)
    for kept in ("metadata", "lenex"):
        if (repo / ".snakemake" / kept).exists():
            shutil.copytree(repo / ".snakemake" / kept, dest / ".snakemake" / kept, symlinks=True)
    return dest
