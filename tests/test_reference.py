"""lenex.pipeline.reference: the reference-run page is generated from the runs file and the claims files alone."""
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from lenex.claims.summary import against_bar
from lenex.pipeline.reference import main, reference_page, shortfall, why_not_held
from lenex.pipeline.reference_record import log_part, run_record, wall_time_text
from lenex.pipeline.reference_record import main as record_main
from lenex.records.stored import read_text

REPO = Path(__file__).resolve().parents[1]
RUN = {"paper": "lex", "title": "LEX", "command": "snakemake x", "wall_time": "1 min", "revision": "`abc`"}
PAPERS = yaml.safe_load((REPO / "config/config.yaml").read_text())["papers"]
#: Every committed set of reference runs: a preset's (results/<preset>/runs.yaml) and each archived one.
REFERENCE_ROOTS = sorted(p.parent for p in [*(REPO / "results").glob("*/runs.yaml"),
                                            *(REPO / "results" / "archive").glob("*/runs.yaml")])


def test_the_archived_workstation_runs_are_among_the_committed_reference_runs():
    assert REPO / "results" / "archive" / "workstation-949ba5e" in REFERENCE_ROOTS


@pytest.mark.parametrize("root", REFERENCE_ROOTS, ids=lambda root: root.relative_to(REPO / "results").as_posix())
def test_each_committed_reference_page_is_what_the_generator_writes(root):
    assert (root / "REFERENCE.md").read_text(encoding="utf-8") == reference_page(root, PAPERS)


def test_the_page_names_the_configured_papers_not_run_at_the_preset(tmp_path):
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m.", "runs": [RUN]}))
    page = reference_page(tmp_path, ["lex", "receptive-field", "segmented"])
    assert ("Not run at this preset yet: `receptive-field`, `segmented` (no reference run, so no page, raw results "
            "or claims of theirs here; `make tables` re-renders only the papers run).") in page
    assert "Not run" not in reference_page(tmp_path, ["lex"]) and "Not run" not in reference_page(tmp_path)


def test_a_paper_run_in_parts_is_named_with_the_parts_committed_so_far(tmp_path):
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m.", "runs": [RUN]}))
    (tmp_path / "raw").mkdir()
    for part in ("b", "a"):
        (tmp_path / "raw" / f"receptive-field.part-{part}.jsonl").write_text("")
    page = reference_page(tmp_path, ["lex", "receptive-field", "segmented"])
    assert ("Being run in recorded parts: `receptive-field`, committed so far "
            "[`a`](raw/receptive-field.part-a.jsonl), [`b`](raw/receptive-field.part-b.jsonl)") in page
    assert "Not run at this preset yet: `segmented` (" in page
    # A paper not configured is not named, and parts of a paper that has its run are not news.
    assert "Being run" not in reference_page(tmp_path, ["lex"])
    ran = {**RUN, "paper": "receptive-field", "title": "RF"}
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m.", "runs": [RUN, ran]}))
    assert "Being run" not in reference_page(tmp_path, ["lex", "receptive-field"])


def claim(on_paper, verdict, n=0, **fields):
    return {"id": f"c{n}", "statement": f"claim {n}", "source": "Table 2", "on_paper": on_paper,
            "verdict": verdict, "on_ours": {"holds": True, "contradicted": False}.get(verdict),
            "effect_fraction": None, "evidence": "", **fields}


def test_the_bar_counts_only_claims_that_hold_on_the_paper_and_not_by_construction():
    claims = [claim(True, "holds"), claim(True, "contradicted"), claim(True, "inconclusive"), claim(None, "holds"),
              claim(False, "holds"), claim(True, "by-construction")]
    bar = against_bar(claims)
    assert (bar["hold"], bar["on_paper"], bar["bar"]) == (1, 3, 3)  # 80% of 3 is 2.4: 3 claims


def quoted(record, trained, tokens):
    return {**record, "scale": {"trained_tokens": trained, "first_seen_tokens": tokens, "never_seen_budgets": None,
                                "quoted": {"key": "rope/2x64/4000", "tokens": tokens, "shape": "2x64",
                                           "tokenizer": "gpt2", "multiple": 8, "ratio": 1.4}}}


def never(record, trained):
    return {**record, "scale": {"trained_tokens": trained, "first_seen_tokens": None, "quoted": None,
                                "never_seen_budgets": [1_000, 16_000]}}


def test_why_not_held_sorts_each_missing_claim_by_its_record():
    claims = [claim(True, "holds", 1), quoted(claim(True, "untestable", 2), 1_000, 4_000),
              claim(True, "untestable", 3, evidence="t2/x@1: paper 1, ours —; not testable on ours: t2/x@1: not computed"),
              never(claim(True, "contradicted", 4), 8_000), claim(True, "contradicted", 5), claim(True, "inconclusive", 6),
              claim(True, "by-construction", 7), claim(None, "contradicted", 8), claim(False, "untestable", 9)]
    groups = list(why_not_held(claims).values())
    assert groups == [["c6"], ["c4 (the study ran 1,000, 16,000 tokens)"], ["c5"],
                      ["c2 (the study shows it at `rope/2x64/4000`: 2x64, 4,000 tokens, 4x the 1,000 its models train)",
                       "c3 (t2/x@1: not computed)"]]  # c1 holds; c7 by construction; c8, c9 not on the paper


def test_shortfall_counts_against_the_80_percent_bar():
    # 10 claims hold on the paper: the bar is 8; 5 hold on ours; 2 more untestable at this scale
    claims = ([claim(True, "holds", n) for n in range(5)] + [quoted(claim(True, "untestable", n), 10, 20) for n in (5, 6)]
              + [claim(True, "inconclusive", n) for n in (7, 8, 9)])
    text = "\n".join(shortfall(claims))
    assert "Against a bar of 80% of them (8 claims): 3 short." in text
    assert "Of the 5 that hold on the paper but not on ours:" in text
    assert "- 3 inconclusive (the effect is inside its interval" in text
    assert "Were every untestable claim to hold, 7 of 10 would." in text
    met = [claim(True, "holds", n) for n in range(4)] + [claim(True, "contradicted", 4)]  # 4 of 5 is the bar of 4
    assert shortfall(met)[0].endswith("(4 claims): met.")


def test_a_paper_with_claims_gets_its_table_and_one_without_says_so(tmp_path):
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "a machine.", "runs": [
        RUN, {**RUN, "paper": "segmented", "title": "Segmented"}]}))
    (tmp_path / "claims").mkdir()
    doc = {"paper": "lex", "preset": "p", "claims": [claim(True, "holds", 1, effect_fraction=0.5),
                                                     claim(True, "contradicted", 2, effect_fraction=-0.1),
                                                     claim(None, "untestable", 3)]}
    (tmp_path / "claims" / "lex.json").write_text(json.dumps(doc))
    main(["--preset", ".", "--results", str(tmp_path), "--config", str(REPO / "config/config.yaml")])
    page = (tmp_path / "REFERENCE.md").read_text()
    assert "Not run at this preset yet: `receptive-field`" in page  # configured, without a run
    lex, segmented = page.split("## Segmented")
    assert ("3 claims; on ours 1 holds, 1 contradicted, 0 inconclusive, 1 untestable, 0 by-construction; "
            "median effect fraction 0.20") in lex and "1 of 2 hold on ours" in lex
    assert "| claim 2 | Table 2 | holds | contradicted | -0.10 |" in lex
    assert "Fixed before the run: `config/claims/lex.yaml`: unknown (not in a git repository)." in lex
    assert "not checked by machine" in segmented and "| claim" not in segmented


def test_fixed_before_the_run_reads_the_claims_files_history(tmp_path):
    """A claims file committed before the run's revision predates it; one changed after does not."""
    from lenex.pipeline.reference import fixed_before_run

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t"), git("config", "user.name", "t")
    (tmp_path / "config/claims").mkdir(parents=True)
    (tmp_path / "config/claims/lex.yaml").write_text("a\n")
    git("add", "-A"), git("commit", "-qm", "claims")
    (tmp_path / "x").write_text("run\n")
    git("add", "-A"), git("commit", "-qm", "the run")
    run = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    line = fixed_before_run("lex", tmp_path, [run])
    assert line.startswith("Fixed before the run: `config/claims/lex.yaml` last changed at `")
    assert line.endswith(f"computed at `{run}`; the claims file predates them: yes.")
    (tmp_path / "config/claims/lex.yaml").write_text("b\n")
    git("add", "-A"), git("commit", "-qm", "claims after the run")
    assert "**no — WARNING: it changed after (or beside) the run it judges.**" in fixed_before_run("lex", tmp_path, [run])
    assert "unknown (a revision is not in this clone's history)" in fixed_before_run("lex", tmp_path, ["0000000"])
    assert "WARNING: never committed" in fixed_before_run("segmented", tmp_path, [run])


def test_a_run_without_its_revision_is_an_error_naming_the_file(tmp_path):
    bad = {k: v for k, v in RUN.items() if k != "revision"}
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m", "runs": [bad]}))
    with pytest.raises(ValueError, match=r"runs\.yaml: run 1 lacks revision"):
        reference_page(tmp_path)


SNAKEMAKE_LOG = """Assuming unrestricted shared filesystem usage.

SNAKEMAKE
=========
  Date: 2026-11-24 18:22:27
  Command: /some/venv/bin/snakemake --cores 2 results/p/lex.md
  Snakefile: /work/Snakefile

Building DAG of jobs...
[Tue Nov 24 18:22:41 2026]
rule train:
{jobs}
[Tue Nov  24 19:02:30 2026]
Finished jobid: 7 (Rule: train)
{done} of 181 steps ({pct}%) done
"""


def snakemake_log(done=181):
    return SNAKEMAKE_LOG.format(jobs="", done=done, pct=round(100 * done / 181))


def test_a_part_is_read_from_the_snakemake_log_header_and_its_last_job():
    part = log_part(snakemake_log(), "a.snakemake.log")
    # 18:22:27 -> 19:02:30 is 40 min 3 s
    assert (part["started"], part["finished"], part["wall_s"]) == ("2026-11-24T18:22:27", "2026-11-24T19:02:30", 2403)
    assert (part["jobs_done"], part["jobs_total"]) == (181, 181)
    assert part["command"] == "snakemake --cores 2 results/p/lex.md"  # the venv's path is dropped
    with pytest.raises(ValueError, match="x.log: not a Snakemake log"):
        log_part("Building DAG of jobs...\n", "x.log")


def test_a_resumed_run_sums_its_parts_and_an_unfinished_one_says_so():
    first, second = log_part(snakemake_log(50), "1.log"), log_part(snakemake_log(131), "2.log")
    record = run_record("p", "lex", [first, second])
    assert (record["wall_s"], record["jobs"], record["complete"]) == (4806, 181, False)  # 131 of 181 planned
    assert wall_time_text(record) == ("80 min 6 s (4806 s), 181 jobs, in 2 parts (2403 s + 2403 s); "
                                      "NOT COMPLETE (the last part did not finish its jobs)")
    assert wall_time_text(run_record("p", "lex", [log_part(snakemake_log(), "1.log")])) == "40 min 3 s (2403 s), 181 jobs"
    other = {**second, "command": "snakemake --cores 1 results/p/lex.md"}
    with pytest.raises(ValueError, match="the logs ran different commands"):
        run_record("p", "lex", [first, other])


def test_a_run_in_recorded_parts_has_one_command_per_part_each_finished():
    part = lambda name, done: {**log_part(snakemake_log(done), f"{name}.log"),  # noqa: E731
                               "command": f"snakemake --cores 2 results/p/raw/rf.part-{name}.jsonl"}
    record = run_record("p", "rf", [part("a", 50), part("a", 181), part("b", 181)])
    assert record["complete"] and record["wall_s"] == 3 * 2403
    assert record["command"] == ("snakemake --cores 2 results/p/raw/rf.part-a.jsonl ; "
                                 "snakemake --cores 2 results/p/raw/rf.part-b.jsonl")
    assert not run_record("p", "rf", [part("a", 181), part("b", 100)])["complete"]
    with pytest.raises(ValueError, match="each recorded part names its own raw results"):
        run_record("p", "rf", [part("a", 181), {**part("b", 181), "command": "snakemake results/p/rf.md"}])


def test_a_recorded_run_gives_the_page_its_command_wall_time_and_raw_revisions(tmp_path):
    log = tmp_path / "2026-11-24T182227.1.snakemake.log"
    log.write_text(snakemake_log())
    record_main(["--preset", "p", "--paper", "lex", "--results", str(tmp_path / "results"), str(log)])
    root = tmp_path / "results" / "p"
    kept = root / "runs" / "lex" / f"{log.name}.xz"  # the evidence is kept, compressed
    assert read_text(kept) == log.read_text() and not (root / "runs" / "lex" / log.name).exists()
    (root / "raw").mkdir()
    (root / "raw" / "lex.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"file": "a", "git_rev": "abc1234"}, {"file": "b"}, {"file": "c", "git_rev": "abc1234"}]) + "\n")
    (root / "runs.yaml").write_text(yaml.safe_dump({"preset": "p", "machine": "m.", "runs": [
        {"paper": "lex", "title": "LEX", "conditions": "tests ran beside it"}]}))
    page = reference_page(root)
    assert ("| LEX | `snakemake --cores 2 results/p/lex.md` | 40 min 3 s (2403 s), 181 jobs; tests ran beside it "
            "| `abc1234` |") in page


def test_a_runs_kept_logs_are_read_compressed_or_plain_in_their_order(tmp_path):
    from test_power_plan import LOG  # a hand-made log with finished jobs

    from lenex.pipeline.job_times import job_spans, run_jobs
    from lenex.records.stored import write_text

    logs = tmp_path / "runs" / "lex"
    logs.mkdir(parents=True)
    first, second = LOG, LOG.replace("rule ", "rule second_")
    write_text(logs / "2026-11-24T100000.1.snakemake.log.xz", first)
    (logs / "2026-11-24T120000.2.snakemake.log").write_text(second)  # one kept before logs were compressed
    jobs = run_jobs(logs)
    assert jobs == job_spans(first) + job_spans(second) and job_spans(first)
    assert jobs[0]["rule"] != jobs[-1]["rule"] and jobs[-1]["rule"].startswith("second_")


def test_why_not_held_says_what_would_decide_an_inconclusive_claim_and_which_sweep_a_contradicted_one_needs():
    power = {"decides": "contradicted", "needed": 9, "n": 3, "unit": "seed",
             "leaning": {"holds": 1, "contradicted": 2, "significantly_against": 2, "of": 7}}
    claims = [claim(True, "inconclusive", 1, power=power),
              claim(True, "contradicted", 2, sweep={"variables": ["budget", "heads"], "why": "w"})]
    groups = list(why_not_held(claims).values())
    assert groups == [["c1 (contradiction needs 9 seeds, now 3; 2 of 7 comparisons significantly against)"],
                      ["c2 (a budget and heads sweep would measure why)"]]


def test_a_run_made_in_one_go_then_a_power_part_is_one_record():
    """LEX's reference run made its whole raw results in one go; its power rerun is a recorded part
    after it (docs/raw-results.md): two commands, each naming what it makes."""
    whole = {**log_part(snakemake_log(), "1.log"),
             "command": "snakemake --cores 2 results/p/lex.md results/p/raw/lex.jsonl"}
    power = {**log_part(snakemake_log(), "2.log"), "command": "snakemake --cores 2 results/p/raw/lex.part-power.jsonl"}
    record = run_record("p", "lex", [whole, power])
    assert record["complete"] and record["wall_s"] == 2 * 2403 and record["command"].count(" ; ") == 1
    with pytest.raises(ValueError, match="each recorded part names its own raw results"):
        run_record("p", "lex", [whole, {**power, "command": "snakemake results/p/lex.md results/p/raw/lex.jsonl -n"}])


def test_a_tables_rerun_is_recorded_beside_its_raw_results(tmp_path):
    log = tmp_path / "2026-11-24T182227.1.snakemake.log"
    log.write_text(snakemake_log())
    out = tmp_path / "results/p/reruns/lex/table2.seeds1-3.run.json"
    record_main(["--preset", "p", "--paper", "lex", "--record", str(out), str(log)])
    record = json.loads(out.read_text())
    assert (record["wall_s"], record["jobs"], record["complete"]) == (2403, 181, True)
    assert read_text(out.with_suffix("") / f"{log.name}.xz") == log.read_text()
    assert not (tmp_path / "results/p/runs").exists()
