"""Bring your own position scheme (config `extra_schemes`): the example of docs/bring-your-own.md
(tests/docs_scheme.py reads it from the page), written to a file outside the tree, becomes a
variant of every paper and a row of every table that compares schemes; a dry run adds exactly its
own jobs; (slow) one tiny table end to end with its row, with no edit to lenex."""

import re
import time

import pytest
import torch

from lenex.positions import POSITIONS, build_position
from lenex.experiment.schemes import check_entries, resolve_entries, with_extra_schemes
from docs_scheme import example_config, example_position, write_example
from test_workflow import REPO, scratch_workflow, snakemake
from tiny_build import tiny_copy

PAGES = [f"results/tiny/{paper}.md" for paper in ("lex", "receptive-field", "segmented")]
TABLE4 = "results/tiny/tables/lex/table4.md"

def dry_run_jobs(workdir, *args) -> dict[str, dict]:
    """output -> {rule, input, shell} of every job a forced dry run lists."""
    run = snakemake("-n", "-p", "--forceall", *args, cwd=workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = {}
    for block in re.split(r"\n(?=\[[^\n]*\]\n(?:local)?rule )", run.stdout):
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.M)
        if rule is None:
            continue
        field = {k: (m[1] if (m := re.search(rf"^\s*{k}: (.*)$", block, re.M)) else "")
                 for k in ("input", "output")}
        shell = re.search(r"^Shell command: (.*)$", block, re.M)
        field["output"] = re.sub(r" \((?:update|temp|protected)\)(?=,|$)", "", field["output"])  # update() outputs' flag
        jobs[field["output"]] = {"rule": rule[1], "input": field["input"], "shell": shell[1] if shell else ""}
    return jobs


def test_no_extra_scheme_leaves_the_experiment_untouched():
    experiment = {"paper": "x", "variants": {"a": {"position": "alibi"}}, "tables": {}}
    assert with_extra_schemes(experiment, {}) is experiment


def test_rows_and_sections_are_added_from_the_templates_without_touching_shared_rows():
    shared = [{"label": "A", "method": "a", "variant": "a", "mask": "causal"}]
    experiment = {"paper": "x", "variants": {"a": {"position": "alibi"}}, "tables": {
        "table1": {"compares_schemes": {"rows": [{"mask": "causal"},
                                                 {"label": "{label} + BCA", "method": "{name}+bca", "mask": "blockwise"}]},
                   "sections": [{"label": "S1", "rows": shared}, {"label": "S2", "rows": shared}]},
        "table2": {"sections": [{"label": "S", "rows": shared}]},
        "table3": {"compares_schemes": {"sections": [{"dataset": "d", "label": "{label} stand-in", "corpus": "c",
                                                      "rows": [{"label": "OOTB", "method": "{name}:ootb", "mask": "causal"}]}]},
                   "sections": [{"label": "S", "rows": shared}]}}}
    merged = with_extra_schemes(experiment, {"mine": {"position": "rope", "label": "Mine", "options": {"base": 500}}})
    assert merged["variants"]["mine"] == {"position": "rope", "position_options": {"base": 500}}
    for section in merged["tables"]["table1"]["sections"]:
        assert section["rows"][1:] == [
            {"label": "Mine", "method": "mine", "variant": "mine", "mask": "causal"},
            {"label": "Mine + BCA", "method": "mine+bca", "variant": "mine", "mask": "blockwise"}]
    assert merged["tables"]["table2"]["sections"][0]["rows"] == shared  # does not compare schemes
    assert merged["tables"]["table3"]["sections"][1] == {
        "dataset": "d", "label": "Mine stand-in", "corpus": "c",
        "rows": [{"label": "OOTB", "method": "mine:ootb", "variant": "mine", "mask": "causal"}]}
    assert shared == [{"label": "A", "method": "a", "variant": "a", "mask": "causal"}]  # input untouched
    with pytest.raises(ValueError, match="already has a variant 'a'"):
        with_extra_schemes(experiment, {"a": {"position": "rope"}})


@pytest.mark.parametrize("entry,message", [
    ({"Mine": {"position": "rope"}}, "extra_schemes.Mine: a scheme name"),
    ({"mine": {"positon": "rope"}}, "extra_schemes.mine: needs `position`"),
    ({"mine": {"position": "rope", "option": {}}}, "extra_schemes.mine: unknown key 'option'"),
])
def test_bad_entries_are_named(entry, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_entries(entry)


@pytest.fixture
def registry_restored():
    """The scheme registers itself in the process-wide registry: give the registry back as it was,
    so a test of the built-in schemes sees them alone whatever order a worker runs the tests in."""
    saved = dict(POSITIONS)
    yield
    POSITIONS.clear()
    POSITIONS.update(saved)


def test_a_scheme_file_outside_src_registers_and_builds(tmp_path, monkeypatch, registry_restored):
    write_example(tmp_path / "w")
    monkeypatch.chdir(tmp_path / "w")
    extra = example_config()["extra_schemes"]
    module, position = extra["mine"]["module"], example_position()
    assert "-" in position and not (tmp_path / "w" / module).resolve().is_relative_to(REPO)
    resolved = resolve_entries(extra)
    assert resolved["mine"]["module"] == module and position in POSITIONS
    scheme = build_position(position, {"scale": 2.0}, d_model=8, n_heads=2, head_dim=4, train_length=4, module=module)
    positions = torch.arange(3)
    expected = -2.0 * torch.log1p((positions[:, None] - positions[None, :]).abs().float())
    assert torch.allclose(scheme.bias(positions, positions), expected.expand(2, 3, 3))
    with pytest.raises(ValueError, match=r"extra_schemes.mine: unknown position scheme 'nope-such'"):
        resolve_entries({"mine": {"position": "nope-such"}})
    with pytest.raises(ValueError, match="extra_schemes.mine: position scheme module 'missing.py' not found"):
        resolve_entries({"mine": {"position": "x", "module": "missing.py"}})


def test_the_module_travels_in_the_model_config_only_when_there_is_one():
    from lenex.config import ModelConfig

    assert "position_module" not in ModelConfig(position="alibi").to_dict()  # built-in: config as before
    own = ModelConfig(position="log-distance", position_module="logdist.py").to_dict()
    assert ModelConfig.from_dict(own).position_module == "logdist.py"


def test_segmented_stand_in_of_an_extra_scheme_is_not_run_under_released_checkpoints():
    from lenex.segmented import targets as seg

    experiment = {"variants": {"gpt2": {"position": "learned"}, "mine": {"position": "rope"}},
                  "tables": {"table2": {"columns": [1], "sections": [{"rows": [
                      {"method": "gpt2:out-of-the-box", "variant": "gpt2"},
                      {"method": "mine:out-of-the-box", "variant": "mine"}]}]}}}
    view = {"model": {"train_length": 32}, "experiment": {"hf_checkpoints": {"gpt2": "openai-community/gpt2"}}}
    assert seg.table_results("paper", view, experiment, "table2") == ["results/paper/eval/segmented/gpt2/seed1/ootb/L32.json"]
    assert "no released checkpoint" in seg.describe_models(view, experiment)["mine"]


def test_an_unknown_scheme_fails_the_dry_run_with_one_line_naming_it(tmp_path):
    workdir = scratch_workflow(tmp_path)
    run = snakemake("-n", "--config", "extra_schemes={mine: {position: rotary}}", cwd=workdir)
    assert run.returncode != 0
    named = [line for line in (run.stdout + run.stderr).splitlines() if "unknown position scheme 'rotary'" in line]
    assert len(named) == 1 and "extra_schemes.mine" in named[0], run.stdout + run.stderr


def test_dry_run_adds_exactly_the_new_schemes_jobs_across_the_three_papers(tmp_path):
    workdir = scratch_workflow(tmp_path / "w")
    config = write_example(workdir)
    before = dry_run_jobs(workdir, *PAGES)
    after = dry_run_jobs(workdir, *PAGES, "--configfile", str(config))
    added = {out: job for out, job in after.items() if out not in before}
    assert set(before) <= set(after)
    # Every added job makes a file of the new variant (its models, evaluations), nothing else.
    assert added and all("/mine/" in out or "/mine." in out for out in added), sorted(added)
    counts, lex_cells = {}, 0
    for out, job in added.items():
        # LEX evaluates one model's cells of one corpus in one job (lex_eval__<preset>_<variant>_s<seed>_<corpus>)
        rule = "lex_eval" if job["rule"].startswith("lex_eval__tiny_mine_") else job["rule"]
        if rule == "train":  # every paper's models are the train rule's: counted by paper
            rule = "train " + out.split("/models/")[1].split("/")[0]
        counts[rule] = counts.get(rule, 0) + 1
        lex_cells += out.count("/eval/lex/mine/") if rule == "lex_eval" else 0
    # LEX: 1 model of each of tiny's 2 seeds, evaluations of its 24 Table 2/4/5/6 cells on 4 corpora;
    # receptive field: 3 corpora x 2 seeds (Table 3), each evaluated once (Tables 1/3/4 read the same files);
    # segmented: a stand-in pretrained, adapted (ootb, da), continued 6 ways x 2 lengths,
    # evaluated for Tables 2-5 (each training job writes its model's curve too: no job of its own).
    assert counts == {"train lex": 2, "lex_eval": 4 * 2, "train receptive-field": 6, "receptive_field_evaluate": 6,
                      "train segmented": 1 + 2 + 12, "segmented_evaluate": 17}, counts
    assert lex_cells == 24 * 2
    # Existing jobs keep their inputs and commands (so nothing of theirs reruns), except the
    # tables (and Figure 1) that compare schemes, which now read and print the new row, and each
    # paper's diagnostics, which read every evaluation beyond L_tr (the new scheme's too).
    changed = sorted(out for out, job in before.items() if after[out] != job)
    expected = [f"results/tiny/tables/lex/table{n}.header.json" for n in (2, 4, 5, 6)]
    expected += [f"results/tiny/tables/{p}/table{n}.md, results/tiny/tables/{p}/table{n}.tex,"
                 f" results/tiny/tables/{p}/table{n}.cells.json"
                 for p, ns in (("lex", (2, 4, 5, 6)), ("receptive-field", (1, 3, 4)), ("segmented", (2, 3, 4, 5)))
                 for n in ns]
    expected += ["results/tiny/figures/lex/figure1.png, results/tiny/figures/lex/figure1.pdf"]
    expected += [f"results/tiny/diagnostics/{p}.md, results/tiny/diagnostics/{p}.png, results/tiny/diagnostics/{p}.pdf,"
                 f" results/tiny/diagnostics/{p}.curves.png" for p in ("lex", "receptive-field", "segmented")]
    assert changed == sorted(expected)


@pytest.mark.slow
def test_tiny_lex_table4_with_the_new_row_end_to_end(tmp_path):
    # A copy of the shared finished tiny run (tests/tiny_build.py): only the new scheme's models, its
    # cells and the tables that print its row have anything to do.
    workdir = tiny_copy(tmp_path / "w", models=("lex",))
    config = write_example(workdir)  # the page's scheme, named with a '-', in a file outside the tree
    module = (workdir / example_config()["extra_schemes"]["mine"]["module"]).resolve()
    assert "-" in example_position() and module.is_file() and not module.is_relative_to(REPO)
    start = time.monotonic()
    run = snakemake("--cores", "2", TABLE4, "--configfile", str(config),
                    cwd=workdir, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    print(f"tiny LEX Table 4 with an extra scheme, on a copy of the finished tiny run: {time.monotonic() - start:.0f} s")
    table = (workdir / TABLE4).read_text()
    row = next(line for line in table.splitlines() if line.startswith("| Mine "))
    # paper / ours / delta at 1x and 8x L_tr: the paper has no number (—), ours is one (± its std over seeds).
    assert len(re.findall(r"— / \d+(?:\.\d+)?(?: ± [\d.]+)? / —", row)) == 2, row
    assert "Mine" in (workdir / TABLE4.replace(".md", ".tex")).read_text()
    again = snakemake("-n", TABLE4, "--configfile", str(config), cwd=workdir)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
