"""Raw results (docs/raw-results.md): recorded files round-trip exactly through the JSON-lines
form, renderers read them from there under LENEX_RAW, headers and subtitles say what the records
say, figures are byte-stable; and (slow) a small pipeline run re-renders byte-identically from
its raw results alone, with nothing but rendering in the DAG."""

import hashlib
import json
import math
import shutil

import pytest
from test_workflow import REPO, job_counts, scratch_workflow, snakemake
from tiny_build import finished_tiny

from lenex.files import save_figure
from lenex.tables.header import build_header
from lenex.pipeline.recorded import recorded_in_part
from lenex.tables.raw_results import (RAW_ENV, collect, file_lines, laid_over, merge, parse, raw_env_value, read_raw,
                                      read_recorded)
from lenex.records.run_facts import NOT_RECORDED, recorded
from lenex.records.stored import compress_file, existing, read_text, write_text
from lenex.pipeline.reference import raw_revisions, raw_text
from lenex.tables.store_once import store_once
from lenex.segmented.figures import recorded_scale

EVAL = {"ppl": 1.1 + 2.2, "nll": math.log(1.1 + 2.2), "seconds": 1e-300, "tokens": 8192, "variant": "xpos",
        "model_config": {"n_layer": 2},
        "scored_tokens_sha256": "ab" * 32, "zeta": None, "é": "ü"}
LIST = [{"length": 32, "ppl": 33986.85705816111, "segment_nll": [9.613155, 10.341369]}, {"length": 64, "ppl": 1.5}]


def write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1) + "\n")
    return str(path)


@pytest.fixture
def recorded_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = {"results/t/eval/a/L32.json": EVAL, "results/t/eval/rf/last_token.json": LIST,
             "results/t/eval/empty.json": []}
    for path, content in files.items():
        write(tmp_path / path, content)
    return files


def test_every_file_comes_back_exactly(recorded_files):
    text = collect(list(recorded_files))
    assert len(text.splitlines()) == 1 + 2 + 1  # one line per record (an empty list still has one)
    back = parse(text)
    assert back == recorded_files
    # Key order and floats survive: the same JSON text as the file the pipeline wrote.
    for path, content in recorded_files.items():
        assert json.dumps(back[path], indent=1) == json.dumps(content, indent=1)
    assert back["results/t/eval/a/L32.json"]["ppl"] == 3.3000000000000003


def test_lines_are_tidy_records_with_their_file(recorded_files):
    lines = [json.loads(line) for line in collect(list(recorded_files)).splitlines()]
    assert [line["file"] for line in lines] == sorted(line["file"] for line in lines)  # sorted: stable text
    rf = [line for line in lines if line["file"].endswith("last_token.json")]
    assert [(r["item"], r["length"]) for r in rf] == [(0, 32), (1, 64)]


def test_parts_merged_are_the_run_in_one_go(recorded_files, tmp_path):
    paths = sorted(recorded_files)
    (tmp_path / "a.jsonl").write_text(collect(paths[:2]))
    (tmp_path / "b.jsonl").write_text(collect(paths[2:]))
    assert merge([str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl")]) == collect(paths)
    (tmp_path / "c.jsonl").write_text(collect(paths[1:]))
    with pytest.raises(ValueError, match=f"{paths[1]} is in two parts"):
        merge([str(tmp_path / "a.jsonl"), str(tmp_path / "c.jsonl")])


def test_parts_read_together_give_each_file_once_and_refuse_one_held_twice(recorded_files, tmp_path):
    paths = sorted(recorded_files)
    (tmp_path / "a.jsonl").write_text(collect(paths[:2]))
    (tmp_path / "b.jsonl").write_text(collect(paths[2:]))
    assert read_raw([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == recorded_files
    (tmp_path / "c.jsonl").write_text(collect(paths[1:]))
    with pytest.raises(ValueError, match=f"{paths[1]} is in two raw-results files: {tmp_path / 'a.jsonl'} and "):
        read_raw([str(tmp_path / "a.jsonl"), str(tmp_path / "c.jsonl")])


def test_reruns_laid_over_replace_the_evaluations_they_hold_and_keep_the_reference_metas(recorded_files, tmp_path,
                                                                                         monkeypatch):
    """A re-run's evaluation replaces the reference run's at its path (a corpus meta stays the
    reference run's: a re-run's page refuses another corpus); a path only a re-run holds is added;
    two re-runs holding one path must agree there. LENEX_RAW names the re-runs after a lone +."""
    meta = {"tokenizer": "gpt2", "splits": {"test": {"n_docs": 3}}}
    write(tmp_path / "results/t/data/c/meta.json", meta)
    reference = tmp_path / "reference.jsonl"
    reference.write_text(collect([*recorded_files, "results/t/data/c/meta.json"]))
    again = {**EVAL, "ppl": 4.4, "nll": math.log(4.4)}
    write(tmp_path / "results/t/eval/a/L32.json", again)
    write(tmp_path / "results/t/data/c/meta.json", {**meta, "prepared": "later"})
    write(tmp_path / "results/t/curves/a/curve.json", {"points": []})
    rerun = tmp_path / "rerun.jsonl"
    rerun.write_text(collect(["results/t/eval/a/L32.json", "results/t/data/c/meta.json", "results/t/curves/a/curve.json"]))
    read = read_raw([str(reference)], [str(rerun)])
    assert read["results/t/eval/a/L32.json"] == again
    assert read["results/t/data/c/meta.json"] == meta
    assert read["results/t/curves/a/curve.json"] == {"points": []}
    assert read["results/t/eval/rf/last_token.json"] == LIST
    assert read_raw([str(reference)])["results/t/eval/a/L32.json"] == EVAL
    assert read_raw([str(reference)], [str(rerun), str(rerun)]) == read  # the same content twice is one file
    write(tmp_path / "results/t/data/c/meta.json", {**meta, "prepared": "another day"})
    fetched_again = tmp_path / "fetched-again.jsonl"
    fetched_again.write_text(collect(["results/t/eval/a/L32.json", "results/t/data/c/meta.json"]))
    assert read_raw([str(reference)], [str(rerun), str(fetched_again)]) == read  # metas are not laid over
    write(tmp_path / "results/t/eval/a/L32.json", EVAL)
    other = tmp_path / "other.jsonl"
    other.write_text(collect(["results/t/eval/a/L32.json"]))
    with pytest.raises(ValueError, match=f"results/t/eval/a/L32.json differs between the re-runs {rerun} and {other}"):
        read_raw([str(reference)], [str(rerun), str(other)])
    value = raw_env_value([str(reference)], [str(rerun)])
    assert value == f"{reference} + {rerun}" and raw_env_value([str(reference)]) == str(reference)
    monkeypatch.setenv(RAW_ENV, value)
    assert laid_over() == [str(rerun)]
    monkeypatch.setenv(RAW_ENV, str(reference))
    assert laid_over() == []


def test_a_part_holds_the_files_of_its_corpora_and_every_file_lies_in_one_part():
    files = ["results/w/data/arxiv/meta.json", "results/w/eval/rf/arxiv/alibi/seed1/last_token.json",
             "results/w/eval/rf/github/t5/seed1/erf.json", "results/w/eval/rf/openwebtext2/t5/seed1/erf.json"]
    parts = {"arxiv": ["arxiv"], "rest": ["openwebtext2", "github"]}
    assert recorded_in_part(files, parts, "arxiv") == files[:2]
    assert recorded_in_part(files, parts, "rest") == files[2:]
    with pytest.raises(ValueError, match="no reference part 'x'; declared: arxiv, rest"):
        recorded_in_part(files, parts, "x")
    with pytest.raises(ValueError, match="github/t5/seed1/erf.json lies in no part"):
        recorded_in_part(files, {"arxiv": ["arxiv"], "owt": ["openwebtext2"]}, "arxiv")
    with pytest.raises(ValueError, match=r"arxiv/meta.json lies in parts \['a', 'b'\]"):
        recorded_in_part(files, {"a": ["arxiv"], "b": ["arxiv", "github", "openwebtext2"]}, "a")


def test_a_part_selects_by_several_segments_of_a_path():
    files = ["results/w/data/arxiv/meta.json", "results/w/eval/rf/arxiv/alibi/seed1/last_token.json",
             "results/w/eval/rf/arxiv/alibi-same-h0/seed2/last_token.json", "results/w/eval/rf/arxiv/t5/seed3/erf.json",
             "results/w/eval/rf/github/t5/seed1/erf.json"]
    parts = {"arxiv-1": ["data/arxiv", "arxiv/seed1", "arxiv/seed2"], "arxiv-2": ["arxiv/seed3"], "github": ["github"]}
    assert recorded_in_part(files, parts, "arxiv-1") == files[:3]
    assert recorded_in_part(files, parts, "arxiv-2") == [files[3]]
    assert recorded_in_part(files, parts, "github") == [files[4]]
    # A segment matches whole: `alibi` selects no file of `alibi-same-h0`.
    only_alibi = {"alibi": ["arxiv/alibi"], "rest": ["data", "arxiv/alibi-same-h0", "arxiv/t5", "github"]}
    assert recorded_in_part(files, only_alibi, "alibi") == [files[1]]
    with pytest.raises(ValueError, match="arxiv/t5/seed3/erf.json lies in no part"):
        recorded_in_part(files, {"a": ["data/arxiv", "arxiv/seed1", "arxiv/seed2"], "b": ["github"]}, "a")


def test_collect_is_deterministic(recorded_files):
    assert collect(list(recorded_files)) == collect(list(reversed(list(recorded_files))))


@pytest.mark.parametrize("content, message", [({"file": "x"}, r"key\(s\) \['file'\]"), ([1, 2], "a JSON object"),
                                              ("text", "a JSON object")])
def test_unrecordable_content_is_named(content, message):
    with pytest.raises(ValueError, match=message):
        file_lines("results/t/eval/bad.json", content)


def test_bad_raw_results_are_named():
    with pytest.raises(ValueError, match="line 1 has no `file`"):
        parse('{"ppl": 1}\n', "raw.jsonl")
    with pytest.raises(ValueError, match="line 2: item 2 of a.json out of order"):
        parse('{"file":"a.json","item":0}\n{"file":"a.json","item":2}\n', "raw.jsonl")
    with pytest.raises(ValueError, match="line 2: a.json recorded twice"):
        parse('{"file":"a.json"}\n{"file":"a.json"}\n', "raw.jsonl")


def test_read_recorded_serves_the_raw_results_only(recorded_files, tmp_path, monkeypatch):
    raw = tmp_path / "results/t/raw/p.jsonl"
    raw.parent.mkdir(parents=True)
    raw.write_text(collect(list(recorded_files)))
    monkeypatch.delenv(RAW_ENV, raising=False)
    assert read_recorded("results/t/eval/a/L32.json") == EVAL  # no raw results named: the file itself
    monkeypatch.setenv(RAW_ENV, str(raw.relative_to(tmp_path)))
    shutil.rmtree(tmp_path / "results/t/eval")
    assert read_recorded("results/t/eval/rf/last_token.json") == LIST
    write(tmp_path / "results/t/eval/stale.json", {"ppl": 1})  # on disk but not recorded: never read
    with pytest.raises(KeyError, match="results/t/eval/stale.json is not among the raw results in results/t/raw"):
        read_recorded("results/t/eval/stale.json")
    monkeypatch.setenv(RAW_ENV, "results/t/raw/missing.jsonl")
    with pytest.raises(FileNotFoundError, match="raw results results/t/raw/missing.jsonl not found"):
        read_recorded("results/t/eval/a/L32.json")


def test_stored_compressed_reads_back_as_the_text_and_the_same_text_gives_the_same_bytes(tmp_path):
    text = collect([]) + '{"file":"a.json","ppl":3.3000000000000003,"é":"ü"}\n' * 50
    write_text(tmp_path / "x.jsonl.xz", text)
    write_text(tmp_path / "y.jsonl.xz", text)
    packed = (tmp_path / "x.jsonl.xz").read_bytes()
    assert packed[:6] == b"\xfd7zXZ\x00" and len(packed) < len(text.encode()) / 5  # xz, and it compresses
    assert read_text(tmp_path / "x.jsonl.xz") == text and packed == (tmp_path / "y.jsonl.xz").read_bytes()
    (tmp_path / "plain.jsonl").write_text(text)
    assert read_text(compress_file(tmp_path / "plain.jsonl")) == text and not (tmp_path / "plain.jsonl").exists()
    assert existing(tmp_path / "plain.jsonl") == str(tmp_path / "plain.jsonl.xz")
    (tmp_path / "bad.jsonl.xz").write_text(text)  # named .xz, but plain text
    with pytest.raises(ValueError, match="bad.jsonl.xz: not a readable xz file"):
        read_text(tmp_path / "bad.jsonl.xz")


def test_a_runs_parts_read_together_serve_what_their_merge_serves(recorded_files, tmp_path, monkeypatch):
    paths = sorted(recorded_files)
    raw = tmp_path / "results/t/raw"
    raw.mkdir(parents=True)
    write_text(raw / "p.part-a.jsonl.xz", collect(paths[:2]))
    write_text(raw / "p.part-b.jsonl.xz", collect(paths[2:]))
    parts = ["results/t/raw/p.part-a.jsonl.xz", "results/t/raw/p.part-b.jsonl.xz"]
    whole, second = collect(paths), collect(paths[1:2])
    assert merge(parts) == whole  # compressed parts merge as plain ones do
    shutil.rmtree(tmp_path / "results/t/eval")
    monkeypatch.setenv(RAW_ENV, " ".join(parts))
    assert {path: read_recorded(path) for path in paths} == parse(whole) == recorded_files
    write_text(raw / "p.part-c.jsonl.xz", second)  # a file in two parts: which one holds it?
    monkeypatch.setenv(RAW_ENV, " ".join([*parts, "results/t/raw/p.part-c.jsonl.xz"]))
    with pytest.raises(ValueError, match=f"{paths[1]} is in two raw-results files: {parts[0]} and "
                                         "results/t/raw/p.part-c.jsonl.xz"):
        read_recorded(paths[0])


def test_store_once_keeps_each_record_once_in_its_compressed_part(recorded_files, tmp_path):
    paths = sorted(recorded_files)
    raw = tmp_path / "results/t/raw"
    raw.mkdir(parents=True)
    (raw / "p.part-a.jsonl").write_text(collect(paths[:2]))
    (raw / "p.part-b.jsonl").write_text(collect(paths[2:]))
    (raw / "p.jsonl").write_text(collect(paths[:1]))  # not the parts' merge: refused, nothing touched
    with pytest.raises(ValueError, match="p.jsonl is not the merge of its parts"):
        store_once(raw)
    assert sorted(f.name for f in raw.iterdir()) == ["p.jsonl", "p.part-a.jsonl", "p.part-b.jsonl"]
    (raw / "p.jsonl").write_text(collect(paths))
    revisions_before = raw_revisions(raw.parent, "p")
    assert len(store_once(raw)) == 3 and store_once(raw) == []  # a second run changes nothing
    assert sorted(f.name for f in raw.iterdir()) == ["p.part-a.jsonl.xz", "p.part-b.jsonl.xz"]
    assert raw_text(raw.parent, "p") == collect(paths) and raw_revisions(raw.parent, "p") == revisions_before


def test_recorded_run_facts():
    records = [{"git_rev": "b2"}, {"git_rev": "a1"}, {"git_rev": "b2"}, {}]
    assert recorded(records, "git_rev") == "a1, b2"  # two runs: both said
    assert recorded([{}], "date") == NOT_RECORDED


def test_header_says_the_runs_facts_and_recorded_architecture():
    preset = {"name": "w", "description": "d", "model": {"n_layer": 4, "d_model": 128, "n_head": 4, "train_length": 64}}
    results = [{"git_rev": "abc1234", "device": "x86_64 CPU, torch 2.13.0", "date": "2026-01-02",
                "model_config": {"n_layer": 6, "d_model": 192, "n_head": 4}}]
    header = build_header(preset, {}, {}, results)
    assert (header["git_rev"], header["device"], header["date"]) == ("abc1234", "x86_64 CPU, torch 2.13.0",
                                                                     "2026-01-02")
    assert (header["n_layer"], header["d_model"]) == (6, 192)  # what ran, not what the preset says
    old = build_header(preset, {}, {}, [{"ppl": 1.0}])  # results from before run facts were recorded
    assert old["git_rev"] == NOT_RECORDED and old["n_layer"] == 4


def test_header_prints_the_scaled_scheme_options_the_models_ran_with():
    from lenex.segmented.tables import table_header
    from lenex.tables.table_data import header_lines

    preset = {"name": "w", "description": "d", "model": {"n_layer": 4, "d_model": 128, "n_head": 4, "train_length": 256},
              "positions": {"xpos": {"scale_base": 128}, "alibi": {"slope_scale": 4}, "t5": {"max_distance": 16}}}

    def ran(position, **options):
        return {"model_config": {"position": position, "position_options": options}}

    # what the records say, not the preset: alibi's slope_scale as recorded, t5 (no model of it) left out
    results = [ran("xpos", scale_base=128, zeta="scalar"), ran("xpos", scale_base=128), ran("alibi", slope_scale=8),
               ran("rope"), {"ppl": 1.0}]
    header = build_header(preset, {}, {}, results)
    assert header["scaled_scheme_options"] == "xpos scale_base 128; alibi slope_scale 8"
    assert ("Scaled scheme options (docs/dimensions.md)", "xpos scale_base 128; alibi slope_scale 8") in header_lines(header)
    # a variant's own value beside the preset's: both are said
    mixed = build_header(preset, {}, {}, [ran("xpos", scale_base=128), ran("xpos", scale_base=512)])
    assert mixed["scaled_scheme_options"] == "xpos scale_base 128 / 512"
    # the segmented paper's headers keep only their own lines and the run's: this one among them
    segmented = table_header({**header, "scale_statement": "s", "lines": [], "stand_in": None})
    assert ("Scaled scheme options (docs/dimensions.md)", "xpos scale_base 128; alibi slope_scale 8") in segmented["lines"]
    # a preset that scales nothing (tiny), or whose scaled schemes no model used: no such fact at all
    unscaled = {k: v for k, v in preset.items() if k != "positions"}
    assert "scaled_scheme_options" not in build_header(unscaled, {}, {}, results)
    assert "scaled_scheme_options" not in build_header(preset, {}, {}, [ran("rope")])


def test_segmented_subtitle_comes_from_the_plotted_models():
    records = [{"model": m, "base_train_length": 64, "model_config": {"n_layer": 6, "d_model": 192, "train_length": 64}}
               for m in ("gpt2", "pythia")]
    scale = recorded_scale("workstation", records, hf=False)
    assert scale == "preset workstation: own stand-in models (gpt2, pythia: 6x192, L_t 64) - NOT the paper's scale"
    assert "size not recorded" in recorded_scale("tiny", [{"model": "gpt2"}], hf=False)


def test_figures_are_byte_stable(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    digests = []
    for attempt in range(2):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2])
        for ext in ("png", "pdf"):
            save_figure(fig, tmp_path / f"f{attempt}.{ext}")
        plt.close(fig)
        digests.append([hashlib.sha256((tmp_path / f"f{attempt}.{ext}").read_bytes()).hexdigest()
                        for ext in ("png", "pdf")])
    assert digests[0] == digests[1]
    assert b"Software" not in (tmp_path / "f0.png").read_bytes()
    pdf = (tmp_path / "f0.pdf").read_bytes()
    assert b"CreationDate" not in pdf and b"Producer" not in pdf and matplotlib.__version__.encode() not in pdf
    with pytest.raises(ValueError, match="unknown format 'svg'"):
        save_figure(None, tmp_path / "f.svg")


FIGURE = "results/tiny/figures/receptive-field/figure12"


@pytest.mark.slow
def test_small_run_rerenders_byte_identically_from_its_raw_results_alone(tmp_path, monkeypatch):
    """A figure of the shared finished tiny run (tests/tiny_build.py) and the receptive-field
    evaluations it was drawn from, copied to a scratch workflow and collected into raw results, then
    everything else deleted: the from_raw run has only the render job in its DAG and writes the
    same bytes."""
    work, tiny = scratch_workflow(tmp_path), finished_tiny()
    before = {ext: (tiny / f"{FIGURE}.{ext}").read_bytes() for ext in ("png", "pdf")}
    sources = sorted(str(p.relative_to(tiny)) for p in (tiny / "results/tiny/eval/receptive-field").rglob("*.json"))
    assert any(s.endswith("seed1/erf.json") for s in sources), sources[:5]
    for source in sources:
        (work / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tiny / source, work / source)
    raw = work / "results/tiny/raw/receptive-field.jsonl"
    raw.parent.mkdir(parents=True)
    monkeypatch.chdir(work)  # recorded paths are relative to the workflow's directory
    raw.write_text(collect(sources))
    shutil.rmtree(work / "results/tiny/eval")
    dry = snakemake("-n", "--forceall", f"{FIGURE}.png", "--config", "from_raw=True", cwd=work)
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert job_counts(dry.stdout + dry.stderr) == {"receptive_field_figure": 1}  # nothing to fetch, prepare, train or evaluate
    again = snakemake("--cores", "1", "--forceall", f"{FIGURE}.png", "--config", "from_raw=True", cwd=work)
    assert again.returncode == 0, again.stderr[-2000:]
    assert {ext: (work / f"{FIGURE}.{ext}").read_bytes() for ext in ("png", "pdf")} == before
    assert sorted(p.name for p in (work / "results/tiny").iterdir()) == ["figures", "logs", "raw"]


def test_corpus_meta_keeps_its_card_facts_without_the_document_index(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    meta = {"role": "pg22", "splits": {"test": {"file": "test.bin", "n_docs": 2, "n_tokens": 900,
                                                 "doc_ids": [3, 5], "groups": ["a", "b"], "tokens_by_component": {"x": 1}}}}
    path = write(tmp_path / "results/t/data/pg22/meta.json", meta)
    back = parse(collect([path]))[path]
    assert back == {"role": "pg22", "splits": {"test": {"file": "test.bin", "n_docs": 2, "n_tokens": 900,
                                                         "tokens_by_component": {"x": 1}}}}


def test_a_mean_over_seeds_run_apart_names_every_seeds_run_in_the_header():
    """A cell whose seeds ran at two revisions on two days (a reference run in recorded parts):
    the header names both, not the first seed's alone."""
    from lenex.tables.seeds import mean_over_seeds

    preset = {"name": "w", "description": "d", "model": {"n_layer": 4, "d_model": 128, "n_head": 4, "train_length": 64}}
    cell = {"variant": "alibi", "corpus": "arxiv", "mask": "causal", "length": 64, "train_length": 64,
            "device": "cpu"}
    seeds = [{**cell, "seed": 1, "ppl": 10.0, "git_rev": "b2", "date": "2026-01-01"},
             {**cell, "seed": 2, "ppl": 12.0, "git_rev": "b2", "date": "2026-01-01"},
             {**cell, "seed": 3, "ppl": 11.0, "git_rev": "a1", "date": "2026-01-02"}]
    merged, = mean_over_seeds(seeds, "ppl")
    assert (merged["ppl"], merged["git_rev"], merged["device"]) == (11.0, ["a1", "b2"], "cpu")
    header = build_header(preset, {}, {}, [merged, {**cell, "variant": "rope", "git_rev": "b2"}])
    assert (header["git_rev"], header["date"], header["device"]) == ("a1, b2", "2026-01-01, 2026-01-02", "cpu")


def test_the_most_specific_selector_takes_a_file_selected_by_several_parts():
    """A power rerun's part names one model's seed (`arxiv/window-40/seed4`) inside a part that
    selects the corpus's seed 4 (`arxiv/seed4`): the file lies in the part of the longer selector."""
    files = ["results/w/eval/rf/arxiv/alibi/seed4/last_token.json",
             "results/w/eval/rf/arxiv/window-40/seed4/erf.json", "results/w/eval/rf/arxiv/window-40/seed1/erf.json"]
    parts = {"seeds45": ["arxiv/seed4"], "power": ["arxiv/window-40/seed4"], "run": ["arxiv/seed1"]}
    assert recorded_in_part(files, parts, "seeds45") == [files[0]]
    assert recorded_in_part(files, parts, "power") == [files[1]]
    with pytest.raises(ValueError, match=r"window-40/seed4/erf.json lies in parts \['a', 'b'\]"):
        recorded_in_part(files, {"a": ["window-40/seed4"], "b": ["arxiv/seed4"], "run": ["seed1"]}, "a")


def test_power_seeds_imply_the_part_power_of_the_seeds_they_add():
    from lenex.experiment.presets import reference_parts

    view = {"name": "w", "experiment": {"seeds": 3, "power_seeds": {"alibi": 5, "arxiv/w-40": 4}},
            "reference_parts": {"run": ["data", "seed1", "seed2", "seed3"]}}
    assert reference_parts(view) == {"run": ["data", "seed1", "seed2", "seed3"],
                                     "power": ["alibi/seed4", "alibi/seed5", "arxiv/w-40/seed4"]}
    assert reference_parts({"experiment": {"seeds": 3}, "reference_parts": {"a": ["x"]}}) == {"a": ["x"]}
    # a run recorded whole (the gpu preset) declares no parts: its extra seeds are in its one file
    assert reference_parts({"experiment": {"seeds": 1, "power_seeds": {"arxiv/sandwich": 3}}}) == {}
    with pytest.raises(ValueError, match="reference part 'power' is implied by experiment.power_seeds"):
        reference_parts({**view, "reference_parts": {"power": ["seed4"]}})
