"""Every job a forced dry run of a preset plans: its rule, outputs and shell command, one JSON file
per snapshot; and the difference of two snapshots. A refactor of the rules shows with it that it
lost no output and changed no command it did not mean to:

    python scripts/dag_snapshot.py take before.json tiny workstation gpu paper
    ... change the rules ...
    python scripts/dag_snapshot.py take after.json tiny workstation gpu paper
    python scripts/dag_snapshot.py compare before.json after.json

Run from the checkout's root with the venv's snakemake on PATH.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time


def planned_jobs(printout: str) -> list[dict]:
    """{rule, outputs, command} of every job of `snakemake -n -p` output, sorted by outputs."""
    from lenex.pipeline.plan import printed_jobs

    jobs = [{**job, "outputs": sorted(job["outputs"])} for job in printed_jobs(printout)]
    return sorted(jobs, key=lambda job: job["outputs"])


def take(path: str, presets: list[str]) -> None:
    snapshot = {}
    for preset in presets:
        start = time.monotonic()
        run = subprocess.run(["snakemake", "-n", "-F", "-p", "--config", f"preset={preset}"],
                             capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"dry run of preset {preset} failed:\n{run.stderr[-3000:]}{run.stdout[-3000:]}")
        snapshot[preset] = planned_jobs(run.stdout)
        print(f"{preset}: {len(snapshot[preset])} jobs ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    with open(path, "w") as out:
        json.dump(snapshot, out, indent=0, sort_keys=True)


def normalised(command: str) -> list[str]:
    """A command's words (quoting written two ways is the same command)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def compare(before_path: str, after_path: str, show: int) -> int:
    before, after = (json.load(open(p)) for p in (before_path, after_path))
    status = 0
    for preset in sorted(set(before) | set(after)):
        old = {tuple(job["outputs"]): job for job in before.get(preset, [])}
        new = {tuple(job["outputs"]): job for job in after.get(preset, [])}
        lost, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
        changed = [key for key in sorted(set(old) & set(new))
                   if normalised(old[key]["command"]) != normalised(new[key]["command"])]
        renamed = sum(old[key]["rule"] != new[key]["rule"] for key in set(old) & set(new))
        print(f"{preset}: {len(old)} jobs before, {len(new)} after; {len(lost)} outputs lost, {len(added)} added, "
              f"{len(changed)} commands changed, {renamed} jobs under another rule")
        for label, keys, table in (("lost", lost, old), ("added", added, new)):
            for key in keys[:show]:
                print(f"  {label}: {table[key]['rule']}: {', '.join(key)}")
        for key in changed[:show]:
            print(f"  changed: {', '.join(key)}\n    before: {old[key]['command']}\n    after:  {new[key]['command']}")
        status |= bool(lost or added)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    taking = sub.add_parser("take")
    taking.add_argument("out")
    taking.add_argument("presets", nargs="+")
    comparing = sub.add_parser("compare")
    comparing.add_argument("before")
    comparing.add_argument("after")
    comparing.add_argument("--show", type=int, default=5, help="examples shown of each kind of difference")
    args = parser.parse_args(argv)
    if args.command == "take":
        take(args.out, args.presets)
        return 0
    return compare(args.before, args.after, args.show)


if __name__ == "__main__":
    sys.exit(main())
