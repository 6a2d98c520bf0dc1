from lenex.cli import run_cli

from .run_all import main

run_cli(main)
