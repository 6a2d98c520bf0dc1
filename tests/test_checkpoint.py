"""One checkpoint loader: the file's recorded `format` picks how the model is rebuilt."""

import subprocess
import sys

import pytest
import torch

from lenex.records.checkpoint import (FORMAT, declared_formats, format_named, format_of, load_model, read_checkpoint,
                              save_checkpoint)
from lenex.config import ModelConfig
from lenex.model import LanguageModel

SMALL = dict(n_layer=1, d_model=16, n_head=2, d_ff=16, vocab_size=64, train_length=8)


HF_FORMAT = "lenex-hf-checkpoint-v1"


def test_every_format_names_importable_code():
    for name in declared_formats():
        fmt = format_named(name)
        for which in ("model_class", "to_payload", "from_payload"):
            assert callable(fmt.resolve(which)), (name, which)


def test_a_lenex_model_is_saved_in_its_format_and_loaded_back(tmp_path):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="alibi"))
    assert format_of(model) == FORMAT
    save_checkpoint(tmp_path / "m.pt", model, step=3)
    loaded, payload = load_model(tmp_path / "m.pt")
    assert payload["format"] == FORMAT and payload["step"] == 3 and not loaded.training
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))


@pytest.mark.parametrize("position", ["learned", "t5", "kerple", "alibi", "rope", "xpos"])
def test_a_scheme_stores_its_parameters_alone_and_takes_its_sizes_from_the_model_config(tmp_path, position):
    """A checkpoint keeps no scheme attribute (d_model ... train_length): the sizes are rebuilt from its
    `model_config`, so renaming one (it was `max_length`) leaves every file written before readable."""
    model = LanguageModel(ModelConfig(**SMALL, position=position))
    save_checkpoint(tmp_path / "m.pt", model)
    payload = read_checkpoint(tmp_path / "m.pt")
    stored = {key for key in payload["model"] if key.startswith("position.")}
    assert stored == {f"position.{name}" for name, _ in model.position.named_parameters()}
    loaded, _ = load_model(tmp_path / "m.pt")
    assert loaded.position.train_length == payload["model_config"]["train_length"] == SMALL["train_length"]


def test_overrides_merge_into_the_stored_option_dicts(tmp_path):
    save_checkpoint(tmp_path / "m.pt", LanguageModel(ModelConfig(**SMALL, position="learned")))
    loaded, _ = load_model(tmp_path / "m.pt", position_options={"interpolate_to": 32})
    assert loaded.config.position_options == {"interpolate_to": 32}


def test_unknown_format_names_the_file_and_the_known_ones(tmp_path):
    torch.save({"format": "someone-elses-v3", "model": {}}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match=rf"{tmp_path / 'x.pt'} has format 'someone-elses-v3', expected "
                                         rf"{FORMAT} or {HF_FORMAT}"):
        load_model(tmp_path / "x.pt")
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(ValueError, match="list.pt has format None"):
        read_checkpoint(tmp_path / "list.pt")


def test_expect_refuses_another_known_format(tmp_path):
    torch.save({"format": HF_FORMAT}, tmp_path / "hf.pt")
    with pytest.raises(ValueError, match=f"hf.pt has format '{HF_FORMAT}', expected {FORMAT}$"):
        read_checkpoint(tmp_path / "hf.pt", expect=FORMAT)


def test_a_model_no_format_stores_is_refused(tmp_path):
    with pytest.raises(TypeError, match="no checkpoint format stores a Linear"):
        save_checkpoint(tmp_path / "m.pt", torch.nn.Linear(2, 2))
    assert not (tmp_path / "m.pt").exists()


def test_loading_a_lenex_checkpoint_does_not_import_transformers(tmp_path):
    save_checkpoint(tmp_path / "m.pt", LanguageModel(ModelConfig(**SMALL)))
    code = ("import sys; from lenex.records.checkpoint import load_model; load_model(sys.argv[1]); "
            "assert 'transformers' not in sys.modules, 'transformers imported'")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.pt")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_model_familys_format_is_found_in_the_tree_without_the_library_naming_it(tmp_path):
    """lenex.records.checkpoint names no model family: the Hugging Face format is registered by
    lenex.hf.checkpoint_format, which the registry finds; its models' module (lenex.hf.models) a
    fresh interpreter imports only when a file of that format is rebuilt."""
    code = ("import sys; from lenex.records.checkpoint import declared_formats, format_named; "
            "assert 'lenex.hf.checkpoint_format' not in sys.modules; "
            f"assert declared_formats() == ['lenex-checkpoint-v1', '{HF_FORMAT}']; "
            "assert 'lenex.hf.checkpoint_format' in sys.modules and 'lenex.hf.models' not in sys.modules; "
            f"fmt = format_named('{HF_FORMAT}'); cls = fmt.resolve('model_class'); assert 'lenex.hf.models' in sys.modules; "
            "assert 'transformers' not in sys.modules, 'transformers imported'; print(cls.__name__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "HFLanguageModel"


def test_an_unknown_format_name_is_one_error_naming_the_known_ones():
    with pytest.raises(ValueError, match=rf"^unknown checkpoint format 'v0'; known: {FORMAT}, {HF_FORMAT}$"):
        format_named("v0")
