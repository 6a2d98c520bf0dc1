"""Scale study: `python -m lenex.scale_study [--cores N] [snakemake arguments ...]` runs
`snakemake --cores N scale_study --config scale_study=True` (lenex.scale_study.study_rules.snakemake_command):
every pending point is trained and scored, gathered into points.jsonl, and the pages rendered.
`--only KEY` trains only the pending points whose key contains KEY; other arguments pass through
to Snakemake (`-n` for a dry run)."""

import argparse
import subprocess
import sys

from .study_rules import snakemake_command


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cores", type=int, default=1, help="points trained side by side, one thread each")
    parser.add_argument("--only", default="", help="train only the pending points whose key contains this")
    args, extra = parser.parse_known_args(argv)
    command = snakemake_command(args.cores, extra, args.only)
    print(" ".join(command), file=sys.stderr)
    return subprocess.call(command)


sys.exit(main())
