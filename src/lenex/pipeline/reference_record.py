"""Record a reference run from Snakemake's own logs: results/<preset>/runs/<paper>.json.

    python -m lenex.pipeline.reference_record --preset workstation --paper lex .snakemake/log/<start>.snakemake.log

Each log is one part of the run (a run cut off and resumed with the same command has several, in
order): its start is the log's `Date:` header, its end the last job's timestamp, its jobs the last
"N of M steps" line. The logs are copied beside the record (as `<log>.xz`), so the wall time
REFERENCE.md states (lenex.pipeline.reference) is re-derivable from committed files and never
typed by hand.
"""
from __future__ import annotations

import argparse
import json
import re
from datetime import datetime
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text
from ..records.stored import SUFFIX, read_text, write_text

HEADER_DATE = re.compile(r"^\s*Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$", re.M)
HEADER_COMMAND = re.compile(r"^\s*Command: (.+?)\s*$", re.M)
JOB_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]\s*$", re.M)
STEPS = re.compile(r"^(\d+) of (\d+) steps \(\d+%\) done\s*$", re.M)


def job_time(stamp: str) -> datetime:
    """The time of a Snakemake job's `[Fri Nov 27 03:34:48 2026]` line (its inside)."""
    return datetime.strptime(" ".join(stamp.split()), "%a %b %d %H:%M:%S %Y")


def log_part(text: str, name: str) -> dict:
    """One part of a run from its Snakemake log: start, end, wall seconds, jobs done of jobs planned."""
    date, command = HEADER_DATE.search(text), HEADER_COMMAND.search(text)
    if not date or not command:
        raise ValueError(f"{name}: not a Snakemake log (no `Date:` and `Command:` header)")
    started = datetime.strptime(date[1], "%Y-%m-%d %H:%M:%S")
    stamps = [job_time(s) for s in JOB_STAMP.findall(text)]
    finished = max([started, *stamps])
    steps = STEPS.findall(text)
    done, total = (int(steps[-1][0]), int(steps[-1][1])) if steps else (0, None)
    argv = command[1].split()
    return {"log": name, "command": " ".join([Path(argv[0]).name, *argv[1:]]),
            "started": started.isoformat(), "finished": finished.isoformat(),
            "wall_s": int((finished - started).total_seconds()), "jobs_done": done, "jobs_total": total}


PART_TARGET = re.compile(r"/raw/[a-z-]+\.part-([a-z0-9-]+)\.jsonl\b")
WHOLE_TARGET = re.compile(r"/raw/[a-z-]+\.jsonl\b")


def part_names(command: str) -> list[str]:
    """The recorded parts a command makes: the part its target names (raw/<paper>.part-<name>.jsonl),
    or `run` for a command that makes the paper's whole raw results in one go (raw/<paper>.jsonl,
    the run a power rerun's part follows: docs/raw-results.md)."""
    return PART_TARGET.findall(command) or (["run"] if WHOLE_TARGET.search(command) else [])


def run_record(preset: str, paper: str, parts: list[dict]) -> dict:
    """The whole run: its logs repeat one command (a run cut off and resumed), or, for a run made
    in recorded parts (a preset's `reference_parts`), one command per part, each naming its
    part's raw results (raw/<paper>.part-<name>.jsonl, or raw/<paper>.jsonl for a first run made
    in one go); each command's last log must finish."""
    if not parts:
        raise ValueError("a run needs at least one Snakemake log")
    commands = list(dict.fromkeys(part["command"] for part in parts))
    if len(commands) > 1:
        named = [part_names(command) for command in commands]
        if any(len(names) != 1 for names in named) or len({n[0] for n in named}) != len(commands):
            raise ValueError(f"the logs ran different commands ({'; '.join(sorted(commands))}): "
                             "a resumed run repeats the command it was started with, and each recorded "
                             "part names its own raw results (raw/<paper>.part-<name>.jsonl)")
    last = {command: [p for p in parts if p["command"] == command][-1] for command in commands}
    return {"preset": preset, "paper": paper, "command": " ; ".join(commands), "parts": parts,
            "wall_s": sum(part["wall_s"] for part in parts),
            "jobs": sum(part["jobs_done"] for part in parts),
            "complete": all(p["jobs_total"] is not None and p["jobs_done"] == p["jobs_total"] for p in last.values())}


def wall_time_text(record: dict) -> str:
    """How REFERENCE.md states a recorded run's wall time."""
    minutes, seconds = divmod(record["wall_s"], 60)
    text = f"{minutes} min {seconds} s ({record['wall_s']} s), {record['jobs']} jobs"
    if len(record["parts"]) > 1:
        text += f", in {len(record['parts'])} parts (" + " + ".join(f"{p['wall_s']} s" for p in record["parts"]) + ")"
    return text if record["complete"] else text + "; NOT COMPLETE (the last part did not finish its jobs)"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--paper", required=True)
    parser.add_argument("--results", default="results", help="the results folder (default: results)")
    parser.add_argument("--record", default=None, help="where the record goes (default: <results>/<preset>/runs/"
                        "<paper>.json; a table's re-run: beside its raw results), its logs in a folder of its stem")
    parser.add_argument("logs", nargs="+", help="the run's Snakemake logs (.snakemake/log/), in order")
    args = parser.parse_args(argv)
    out = Path(args.record) if args.record else Path(args.results) / args.preset / "runs" / f"{args.paper}.json"
    parts = [log_part(read_text(log), Path(log).name.removesuffix(SUFFIX)) for log in args.logs]
    record = run_record(args.preset, args.paper, parts)
    logs = out.with_suffix("")
    logs.mkdir(parents=True, exist_ok=True)
    for log in args.logs:
        # Kept compressed (the committed tree travels to the GPU machine whole: docs/raw-results.md);
        # the record names each log as Snakemake did.
        kept = logs / (Path(log).name.removesuffix(SUFFIX) + SUFFIX)
        if Path(log).resolve() != kept.resolve():
            write_text(kept, read_text(log))
    atomic_write_text(out, json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    run_cli(main)
