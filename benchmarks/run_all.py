"""Run every benchmark section, print its table and write its JSON.

    python -m benchmarks                 # everything, on the GPU if there is one
    python -m benchmarks --quick         # under a minute: proves the scripts work, numbers mean little
    python -m benchmarks --only peak,train --device cpu --threads 2
    python -m benchmarks --only compile  # optional: torch.compile vs eager on the small shape

JSON goes to benchmarks/results/<device tag>/<section>.json (--out to change), with the machine
and its load average in every file. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import torch

from lenex.device import pick_device
from lenex.files import atomic_write_text

from . import compile_probe, eval_length, peak, pipeline, train_throughput
from .common import machine, write_json

# The evaluation section measures each block's peak RSS (common.PeakMemory), which needs big frees
# to go back to the kernel at once: a fixed glibc mmap threshold, read at process start, so that
# section runs in a child process started with it. The others run with glibc's defaults, as the
# pipeline's trainers do (a 1 MiB threshold would add page faults to every activation of a step).
MMAP_THRESHOLD = {"MALLOC_MMAP_THRESHOLD_": "1048576"}

SECTIONS = ["peak", "train", "eval", "pipeline"]  # the default run
OPTIONAL = ["compile"]  # run only when named in --only
log = logging.getLogger("benchmarks")


def device_tag(device: torch.device) -> str:
    if device.type != "cuda":
        return "cpu"
    return "cuda-" + torch.cuda.get_device_name(device).lower().replace("nvidia ", "").split()[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one or two samples: under a minute")
    parser.add_argument("--device", default="auto", help="auto (GPU if any), cpu, cuda")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS + OPTIONAL}")
    parser.add_argument("--out", default=None, help="folder for the JSON (default benchmarks/results/<device>[-quick])")
    parser.add_argument("--no-fairseq", action="store_true", help="skip fairseq even when it is installed")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS + OPTIONAL))
    if unknown:
        raise ValueError(f"unknown section {unknown[0]!r}; known: {', '.join(SECTIONS + OPTIONAL)}")
    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    tag = device_tag(device) + ("-quick" if args.quick else "")
    out = Path(args.out) if args.out else Path(__file__).resolve().parent / "results" / tag
    context = {"machine": machine(device), "quick": args.quick, "command": " ".join(["python -m benchmarks", *(argv or sys.argv[1:])]),
               "malloc_mmap_threshold": os.environ.get("MALLOC_MMAP_THRESHOLD_", "glibc default")}
    peak_flops = None
    for section in sections:
        if section == "peak" or (section == "train" and peak_flops is None):
            result = peak.run(device, args.quick)
            peak_flops = result["peak_flops"]
            if section == "peak":
                _report(out, "peak", context, result, peak.table(result))
        if section == "train":
            result = train_throughput.run(device, args.quick, peak_flops, with_fairseq=not args.no_fairseq)
            _report(out, "train", context, result, train_throughput.table(result))
        elif section == "eval" and os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
            child = [sys.executable, "-m", "benchmarks", "--only", "eval", "--device", args.device,
                     "--threads", str(args.threads), "--out", str(out)] + (["--quick"] if args.quick else [])
            subprocess.run(child, check=True, env={**os.environ, **MMAP_THRESHOLD})
        elif section == "eval":
            result = eval_length.run(device, args.quick)
            _report(out, "eval", context, result, eval_length.table(result))
        elif section == "pipeline":
            previous = _previous(out / "pipeline.json")
            result = pipeline.run(args.quick, build_cores=args.threads)
            context_here = {**context, "revision": pipeline.revision()}
            if previous:  # the figures this run replaces, kept beside it
                context_here["previous"] = {k: previous[k] for k in ("revision", "machine", "result") if k in previous}
            _report(out, "pipeline", context_here, result, pipeline.table(result, previous))
            if not args.quick and not args.out:  # the docs quote the measured goals (docs/testing.md)
                pipeline.write_docs_block(pipeline.REPO / "docs" / "testing.md", json.loads((out / "pipeline.json").read_text()))
        elif section == "compile":
            result = compile_probe.run(device, args.quick)
            _report(out, "compile", context, result, compile_probe.table(result))


def _previous(path: Path) -> dict | None:
    """The JSON a section is about to replace (its figures are printed beside the new ones)."""
    return json.loads(path.read_text()) if path.exists() else None


def write_page(path: Path, section: str, payload: dict, text: str) -> None:
    """The printed table as a page beside the JSON (what a write-up links to instead of copying)."""
    machine = payload["machine"]
    atomic_write_text(path, f"# {section}\n\n{text}\n\n`{payload['command']}` at"
                      f" {payload.get('revision', 'an unrecorded revision')}; {machine['cpu']}, {machine['cpu_count']} CPUs,"
                      f" load average {machine['load_average_1_5_15'][0]:.2f} before, {payload['load_average_after'][0]:.2f}"
                      " after.\n")


def _report(out: Path, section: str, context: dict, result: dict, text: str) -> None:
    payload = {**context, "load_average_after": list(os.getloadavg()), "result": result}
    write_json(out / f"{section}.json", payload)
    write_page(out / f"{section}.md", section, payload, text)
    print(f"\n## {section}\n{text}\n(written {out / (section + '.json')})", flush=True)
