"""Pipeline cost: the whole tiny DAG from scratch, and how long Snakemake takes with nothing to do.

- The whole DAG at `tiny` (`snakemake --cores 2`, every paper whole, fetches included) in a fresh
  copy of this working tree (its tracked files, nothing under results/ or resources/), as a new user
  would run it: wall time, jobs, the scheduler's own CPU (its process alone, read from /proc while it
  runs, not its jobs'), then no-op reruns there (`snakemake --cores 2` and `snakemake --cores 2 -n`)
  that must print "Nothing to be done".
- Per-job start-up: the wall time of `python -c "import <entry>"` for each entry point the rules call
  (what every job pays before it does any work), and of `python -m lenex.pipeline.launch <entry> --help`
  with a fork server up (what a job of a local run pays: lenex.pipeline.launch).
- A no-op rerun of one paper's whole DAG: `snakemake --cores 1 results/tiny/lex.md` (every table and
  figure of the LEX paper at the `tiny` preset) after the target is complete. If it is not, it is
  built first, untimed (about ten minutes on 2 cores); each timed rerun must then print
  "Nothing to be done", or the section fails.
- `snakemake -n` on the `paper` preset: every target of the paper-scale DAG (the corpus cards and the
  three whole-paper pages), so the time to build and schedule the largest DAG the pipeline has.
- `make test`'s wall time (not with --quick): the whole suite in this checkout, as CI runs it after
  `make run`. The whole DAG, its no-op dry run and the suite are printed beside issue 47's goals.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import markdown_table, summary

log = logging.getLogger("benchmarks.pipeline")

REPO = Path(__file__).resolve().parents[1]
WHOLE_PAPER = "results/tiny/lex.md"
WHOLE_DAG = "whole tiny DAG from scratch (all papers, fetches included)"
MAKE_TEST = "make test (the whole suite, after make run)"
NOTHING_TO_DO = "Nothing to be done"


def _pending_jobs(output: str) -> int:
    if NOTHING_TO_DO in output:
        return 0
    match = re.search(r"^total\s+(\d+)", output, flags=re.MULTILINE)
    if match is None:
        raise RuntimeError(f"could not read the job count from snakemake's output:\n{output[-2000:]}")
    return int(match.group(1))


def _snakemake(args: list[str]) -> tuple[float, str]:
    return _snakemake_in(REPO, args)


def _snakemake_env(root: Path = REPO) -> dict:
    """The rules call `python -m lenex...`: the benchmarks' interpreter comes first on PATH, and the
    code is the one under `root` (a fresh copy runs its own src/, not the editable install's)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "PYTHONPATH": str(root / "src")}


def fresh_copy(source: Path, dest: Path) -> None:
    """The tracked files of `source`'s working tree (as edited, not as committed), as a clone has."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=source, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        src = source / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def _own_cpu_seconds(pid: int) -> float | None:
    """utime + stime of the process itself (fields 14-15 of /proc/<pid>/stat), without its children."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed_with_scheduler_cpu(command: list[str], cwd: Path, log_path: Path) -> tuple[float, float, int]:
    """Wall seconds, the scheduler's own CPU seconds (sampled each 0.2 s until it exits) and its exit code."""
    start = time.perf_counter()
    with open(log_path, "w") as out:
        proc = subprocess.Popen(command, cwd=cwd, env=_snakemake_env(cwd), stdout=out, stderr=subprocess.STDOUT)
        cpu = 0.0
        while proc.poll() is None:
            cpu = _own_cpu_seconds(proc.pid) or cpu
            time.sleep(0.2)
    return time.perf_counter() - start, cpu, proc.returncode


def whole_dag(source: Path, cores: int, keep: Path | None = None) -> dict:
    """The whole default DAG (tiny) from scratch in a fresh copy of `source`, then its no-op rerun."""
    work = Path(tempfile.mkdtemp(prefix="lenex-dag-")) if keep is None else keep
    try:
        fresh_copy(source, work)
        jobs = _pending_jobs(subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", str(cores)], cwd=work,
                                            env=_snakemake_env(work), capture_output=True, text=True, check=True).stdout)
        log.info("whole tiny DAG: %d jobs in %s (log: %s)", jobs, work, work / "whole-dag.log")
        wall, cpu, code = _timed_with_scheduler_cpu([sys.executable, "-m", "snakemake", "--cores", str(cores)], work,
                                                    work / "whole-dag.log")
        if code:
            raise RuntimeError(f"the whole DAG failed ({code}):\n{(work / 'whole-dag.log').read_text()[-2000:]}")
        rerun, dry = [], []
        for _ in range(3):
            for args, times in ((["--cores", str(cores)], rerun), (["--cores", str(cores), "-n"], dry)):
                elapsed, output = _snakemake_in(work, args)
                if NOTHING_TO_DO not in output:
                    raise RuntimeError(f"the rerun did work instead of nothing:\n{output[-2000:]}")
                times.append(elapsed)
        return {"command": f"snakemake --cores {cores}", "jobs": jobs, "seconds": wall, "scheduler_cpu_seconds": cpu,
                "wall_seconds_per_job": wall / jobs, "scheduler_cpu_seconds_per_job": cpu / jobs,
                "noop_rerun_seconds": summary(rerun), "noop_dry_run_seconds": summary(dry)}
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def entry_points() -> list[str]:
    """The modules the rules run (`python -m <module>`), read from the rule files, and the trainers
    the training rule's specs start (lenex.pipeline.specs: its command is built there)."""
    from lenex.pipeline.specs import BACKENDS
    from lenex.segmented.paper import CONTINUED

    text = "\n".join(p.read_text() for p in sorted((REPO / "workflow" / "rules").glob("*.smk")))
    found = set(re.findall(r"python -m (?:lenex\.pipeline\.launch )?(lenex[\w.]*)", text)) | set(re.findall(r'module="(lenex[\w.]*)"', text))
    found |= {CONTINUED, *(BACKENDS[name].module for name in BACKENDS)}
    return sorted(found - {"lenex.pipeline.launch"})  # the launcher itself is how they start, not one of them


def _time_each_module(command, env: dict, reps: int, limit: int | None) -> dict:
    """Seconds per run of `command(module)` for each entry point the rules call."""
    per_module = {}
    for module in entry_points()[:limit]:
        seconds = []
        for _ in range(reps):
            start = time.perf_counter()
            subprocess.run(command(module), cwd=REPO, env=env, check=True, capture_output=True)
            seconds.append(time.perf_counter() - start)
        per_module[module] = summary(seconds)
    return per_module


def startup(reps: int, limit: int | None = None) -> dict:
    """Seconds to start Python and import each entry point: the floor of every job's wall time."""
    return _time_each_module(lambda module: [sys.executable, "-c", f"import {module}"], _snakemake_env(), reps, limit)


def forked_startup(reps: int, limit: int | None = None) -> dict:
    """Seconds for `python -m lenex.pipeline.launch <module> --help` with a fork server up (lenex.pipeline.launch):
    what a job pays before its work in a local run (the module's own imports beyond torch included)."""
    from lenex.pipeline import launch

    folder = tempfile.mkdtemp(prefix="lenex-bench-launch-")
    server = launch.start_server(folder, cwd=REPO, env=_snakemake_env())
    try:
        env = {**_snakemake_env(), launch.SOCKET_ENV: launch.wait_until_serving(server, folder)}
        return _time_each_module(lambda module: [sys.executable, "-m", "lenex.pipeline.launch", module, "--help"], env, reps,
                                 limit)
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def _snakemake_in(cwd: Path, args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=_snakemake_env(cwd),
                          capture_output=True, text=True, check=False)
    output = done.stdout + done.stderr
    if done.returncode:
        raise RuntimeError(f"snakemake {' '.join(args)} failed ({done.returncode}):\n{output[-2000:]}")
    return time.perf_counter() - start, output


def noop_rerun(target: str, reps: int, build_cores: int) -> dict:
    entry = {"command": f"snakemake --cores 1 {target}", "dag_jobs": dry_run(["--forceall", target], 1)["pending_jobs"]}
    pending = dry_run([target], 1)["pending_jobs"]
    if pending:
        log.info("%s has %d pending jobs: building it first (untimed)", target, pending)
        entry["built_first"] = {"jobs": pending, "seconds": _snakemake(["--cores", str(build_cores), target])[0]}
    seconds = []
    for _ in range(reps):
        elapsed, output = _snakemake(["--cores", "1", target])
        if NOTHING_TO_DO not in output:
            raise RuntimeError(f"the rerun of {target} did work instead of nothing:\n{output[-2000:]}")
        seconds.append(elapsed)
    return {**entry, "seconds": summary(seconds), "pending_jobs": 0}


def dry_run(args: list[str], reps: int) -> dict:
    seconds, output = [], ""
    for _ in range(reps):
        elapsed, output = _snakemake(["-n", "--cores", "1", *args])
        seconds.append(elapsed)
    return {"command": " ".join(["snakemake -n --cores 1", *args]), "seconds": summary(seconds),
            "pending_jobs": _pending_jobs(output)}


def run(quick: bool, build_cores: int = 2) -> dict:
    """One entry per measurement; one that fails is recorded with snakemake's last lines, not raised,
    so the other sections' results are still written. --quick only dry-runs (nothing is built)."""
    measurements = {
        WHOLE_DAG: (
            (lambda: dry_run(["--forceall"], 1)) if quick else (lambda: whole_dag(REPO, build_cores))),
        "start-up per job (python + import of each entry point)": (
            lambda: {"per_module": startup(1, limit=3) if quick else startup(3)}),
        "start-up per job forked from the fork server (lenex.pipeline.launch <module> --help)": (
            lambda: {"per_module": forked_startup(1, limit=3) if quick else forked_startup(3)}),
        f"no-op rerun, whole LEX paper ({WHOLE_PAPER})": (
            (lambda: dry_run([WHOLE_PAPER], 1)) if quick else (lambda: noop_rerun(WHOLE_PAPER, 3, build_cores))),
        "snakemake -n, paper preset (all papers)": lambda: dry_run(["--config", "preset=paper"], 1 if quick else 3),
    }
    if not quick:  # the whole suite: minutes, and it needs the finished tiny run it builds if missing
        measurements[MAKE_TEST] = lambda: test_suite(build_cores)
    results = {}
    for name, measure in measurements.items():
        try:
            results[name] = measure()
        except (RuntimeError, subprocess.CalledProcessError, OSError) as err:
            results[name] = {"error": str(err).splitlines()[0], "detail": str(err)[-1500:]}
    return results


def test_suite(workers: int = 2) -> dict:
    """The README's test command (`make test`: the whole suite on `workers` pytest-xdist workers) in
    this checkout, as CI runs it after `make run` (the end-to-end tests share that finished run)."""
    command = [sys.executable, "-m", "pytest", "-n", str(workers), "--dist", "worksteal", "-q", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env={**_snakemake_env(), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    closing = (done.stdout.strip().splitlines() or [""])[-1]
    if done.returncode:
        raise RuntimeError(f"make test failed ({done.returncode}): {closing}\n{done.stdout[-2000:]}")
    return {"command": "make test", "seconds": seconds, "closing_line": closing}


#: Issue 47's goals, on a 2-core machine like CI's: each printed beside what was measured.
GOALS = {"the whole tiny DAG after set-up (s)": 240.0, "no-op rerun, snakemake --cores 2 -n (s)": 1.5,
         "make test (s)": 480.0}


def against_goals(result: dict) -> list[list]:
    """(what, measured, goal, met) for each goal this run measured."""
    whole = result.get(WHOLE_DAG, {})
    measured = {"the whole tiny DAG after set-up (s)": whole.get("seconds"),
                "no-op rerun, snakemake --cores 2 -n (s)": whole.get("noop_dry_run_seconds", {}).get("median"),
                "make test (s)": result.get(MAKE_TEST, {}).get("seconds")}
    return [[what, f"{measured[what]:.1f}", goal, "yes" if measured[what] <= goal else "NO"]
            for what, goal in GOALS.items() if isinstance(measured[what], (int, float))]


def revision() -> str:
    """The commit measured, `+edits` when the working tree differs from it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True,
                           text=True).stdout.strip()
    return head + ("+edits" if dirty else "")


def _headline(r: dict) -> list:
    """(seconds, jobs, scheduler CPU s, no-op rerun s) of one measurement, blank where not measured."""
    if "error" in r:
        return ["failed", "", "", ""]
    if "per_module" in r:
        medians = sorted(m["median"] for m in r["per_module"].values())
        return [f"{medians[len(medians) // 2]:.2f} median, {medians[-1]:.2f} max", len(medians), "", ""]
    seconds = r["seconds"]["median"] if isinstance(r["seconds"], dict) else r["seconds"]
    rerun = r.get("noop_rerun_seconds", {}).get("median", "")
    return [seconds, r.get("jobs", r.get("dag_jobs", r.get("pending_jobs", ""))), r.get("scheduler_cpu_seconds", ""), rerun]


def table(result: dict, previous: dict | None = None) -> str:
    """This run's figures, each followed by the previous run's (the JSON this one replaces)."""
    before = (previous or {}).get("result", {})
    rows = []
    for name, r in result.items():
        rows.append([name, "this run", *_headline(r), f"`{r['command']}`" if r.get("command") else ""])
        if name in before:
            rows.append(["", "previous", *_headline(before[name]), ""])
    header = ["what", "run", "seconds", "jobs (or modules)", "scheduler CPU s", "no-op rerun s", "command"]
    measured = f" (previous: {previous.get('revision', 'unknown revision')})" if previous else ""
    goals = against_goals(result)
    beside = ("\n\nAgainst the goals (issue 47)\n" + markdown_table(["what", "measured", "goal", "met"], goals)) if goals else ""
    return "Pipeline cost" + measured + "\n" + markdown_table(header, rows) + beside


DOCS_BLOCK = ("<!-- measured: benchmarks/results/cpu/pipeline.json (python -m benchmarks --only pipeline) -->",
              "<!-- /measured -->")


def docs_block(payload: dict) -> str:
    """The measured goals as the docs show them: written by the benchmark, never typed."""
    machine = payload["machine"]
    rows = against_goals(payload["result"])
    return "\n".join([DOCS_BLOCK[0], markdown_table(["what", "measured", "goal", "met"], rows), "",
                       f"Measured at {payload.get('revision', 'an unrecorded revision')} on {machine['cpu']},"
                       f" {machine['cpu_count']} CPUs (load average {machine['load_average_1_5_15'][0]:.2f} before).",
                       DOCS_BLOCK[1]])


def write_docs_block(page: Path, payload: dict) -> None:
    """Replace the measured block of `page` (docs/testing.md) with this run's figures."""
    text = page.read_text(encoding="utf-8")
    start, end = text.index(DOCS_BLOCK[0]), text.index(DOCS_BLOCK[1]) + len(DOCS_BLOCK[1])
    page.write_text(text[:start] + docs_block(payload) + text[end:], encoding="utf-8")
