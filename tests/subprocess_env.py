"""The environment for a subprocess that runs lenex's rules (Snakemake, make, sbatch jobs)."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def env_with_venv(**extra: str) -> dict[str, str]:
    """os.environ with the running interpreter's bin first on PATH, plus `extra`.

    Rules call `python -m lenex...` and make calls `snakemake`: both must be the ones of the
    environment running the tests, also when pytest is started outside make (no venv on PATH)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", **extra}
