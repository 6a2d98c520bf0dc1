"""Scale study: `python -m lenex.scale_study` runs lenex.scale_study.study."""

from ..cli import run_cli
from .study import main

run_cli(main)
