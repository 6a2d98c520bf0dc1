"""Issue 36, tables: a cell whose result file records another model than the cell names is an
error, never a row (lenex.records.provenance.check_result_models, called where the table builders read
result files)."""

import json
from pathlib import Path

import pytest

from lenex.cli import run_cli
from lenex.segmented.tables import main as segmented_main
from lenex.tables.render import load_experiment, load_results, main as render_main

REPO = Path(__file__).resolve().parents[1]
LEX = REPO / "config" / "experiments" / "lex.yaml"
MODEL = {"n_layer": 2, "d_model": 64, "n_head": 4, "d_ff": 256, "vocab_size": 50257, "dropout": 0.0,
         "position": "rope", "position_options": {}, "mask": "causal", "mask_options": {}, "train_length": 64}


def _result(tmp_path, name="rope", **model):
    """A RoFormer cell of LEX Table 2 as lenex.scoring.evaluate writes it."""
    record = {"variant": "rope", "corpus": "pg22", "paper": "lex", "preset": "tiny", "mask": "causal", "length": 64,
              "train_length": 64, "ppl": 123.4, "checkpoint": "results/tiny/models/lex/rope.pt",
              "model_config": {**MODEL, **model}}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(record))
    return path, record


def _table_args(tmp_path, *results):
    header = tmp_path / "header.json"
    header.write_text(json.dumps({"preset": "tiny", "train_length": 64}))
    return ["--spec", str(LEX), "--table-key", "table2", "--header", str(header), "--out-md", str(tmp_path / "t.md"),
            "--out-tex", str(tmp_path / "t.tex"), "--results", *map(str, results)]


def test_a_cell_recording_another_model_fails_the_table(tmp_path, capsys):
    """`cp alibi.pt rope.pt` before the RoFormer cell was scored: today its row shows ALiBi's
    perplexity, rc 0. The result records the model it scored: the table refuses it."""
    swapped, _ = _result(tmp_path, "swapped", position="alibi")
    with pytest.raises(SystemExit) as stop:
        run_cli(render_main, _table_args(tmp_path, swapped))
    said = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(said) == 1, said
    assert said[0].startswith(f"error: {swapped}: variant 'rope' has position 'rope', the model scored "
                              "(results/tiny/models/lex/rope.pt) has 'alibi'"), said
    assert not (tmp_path / "t.md").exists()


def test_the_right_model_fills_its_cell(tmp_path):
    right, _ = _result(tmp_path)
    run_cli(render_main, _table_args(tmp_path, right))
    assert "123.40" in (tmp_path / "t.md").read_text()


def test_a_checkpoint_identity_naming_another_variant_fails(tmp_path):
    """Once checkpoints record their labels, a result records them too: an ALiBi-shaped RoPE (same
    config) trained as another variant is refused by its label."""
    path, record = _result(tmp_path)
    path.write_text(json.dumps({**record, "identity": {"variant": "xpos_no_rotation", "paper": "lex"}}))
    with pytest.raises(ValueError, match="its cell is variant 'rope', its checkpoint .* records 'xpos_no_rotation'"):
        load_results([path], load_experiment(LEX))


def test_option_of_a_variant_is_compared(tmp_path):
    path, record = _result(tmp_path)
    path.write_text(json.dumps({**record, "variant": "xpos_scalar_zeta", "model_config": {**MODEL, "position": "xpos"}}))
    with pytest.raises(ValueError, match="position_options.zeta 'scalar', the model scored .* has None"):
        load_results([path], load_experiment(LEX))


def test_a_segmented_cell_is_checked_by_its_model(tmp_path, capsys):
    result = tmp_path / "ootb.json"
    result.write_text(json.dumps({"model": "pythia-small", "run": "ootb", "length": 32, "ppl": 9.0, "base_train_length": 32,
                                  "checkpoint": "results/tiny/models/segmented/pythia-small/ootb.pt",
                                  "model_config": {**MODEL, "position": "learned"}}))
    preset, header = REPO / "config" / "presets" / "tiny.yaml", tmp_path / "h.json"
    args = ["--spec", str(REPO / "config" / "experiments" / "segmented.yaml"), "--table-key", "table2",
            "--preset-file", str(preset), "--models", "{}", "--out-md", str(tmp_path / "t.md"),
            "--out-tex", str(tmp_path / "t.tex"), "--results", str(result)]
    with pytest.raises(SystemExit):
        run_cli(segmented_main, args)
    assert "model 'pythia-small' has position 'rope', the model scored" in capsys.readouterr().err
