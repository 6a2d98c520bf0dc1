"""A position scheme is reached only through what `PositionScheme` declares (issue 50): no scheme's
name or class in config.py or the model code, every scheme method they call declared on the base
class with a default, and one name pattern (`log-distance` included) wherever a name is checked."""

import ast
from pathlib import Path

import pytest
import torch
import yaml

from docs_scheme import example_config, example_position
from lenex.config import DEFAULT_POSITION, ModelConfig
from lenex.model.transformer import LanguageModel
from lenex.pipeline.settings import validate
from lenex.positions import POSITIONS, PositionScheme, build_position
from lenex.positions.base import NAME_PATTERN

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "lenex"
SCHEMAS = REPO / "workflow" / "schemas"
# The code that runs every scheme alike: it may only ask the scheme what the base class declares.
GENERIC = [SRC / "config.py", *sorted((SRC / "model").glob("*.py"))]
# Expressions that hold a scheme in that code: `scheme`, `self.position`, `self._scheme`.
SCHEME_NAMES, SCHEME_ATTRIBUTES = {"scheme"}, {"position", "_scheme"}


def _holds_scheme(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in SCHEME_NAMES
    return isinstance(node, ast.Attribute) and node.attr in SCHEME_ATTRIBUTES and isinstance(node.value, ast.Name)


def leaks(source: str, allowed: frozenset = frozenset()) -> list[str]:
    """What in `source` treats one scheme apart: a registered scheme's name as a string (but the
    assignments named in `allowed`), a scheme class named, a type or attribute test on a scheme,
    and a method or attribute asked of a scheme that PositionScheme does not declare. A keyword
    argument's value (`reduction="none"`) and a message's text (f-strings) are other words
    spelled like a scheme (NoPE's `none`)."""
    names, classes = set(POSITIONS), {cls.__name__ for cls in POSITIONS.values()}
    tree = ast.parse(source)
    exempt = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id in allowed for t in node.targets)}
    exempt |= {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg != "position"}
    exempt |= {id(inner) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in exempt:
            found.append(f"line {node.lineno}: the scheme name {node.value!r}")
        elif isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", None)) in classes:
            found.append(f"line {node.lineno}: the scheme class {getattr(node, 'id', None) or node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("isinstance", "hasattr", "getattr") and node.args and _holds_scheme(node.args[0])):
            found.append(f"line {node.lineno}: {node.func.id} on a scheme")
        elif (isinstance(node, ast.Attribute) and _holds_scheme(node.value) and not hasattr(PositionScheme, node.attr)
              and node.attr not in PositionScheme.__annotations__):  # declared, set by __init__
            found.append(f"line {node.lineno}: {node.attr} is not declared by PositionScheme")
    return found


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: p.name)
def test_config_and_model_code_ask_schemes_only_what_the_base_class_declares(path):
    # config.py holds one scheme name: the default of a config that names none, a value, not a rule.
    allowed = frozenset({"DEFAULT_POSITION"}) if path.name == "config.py" else frozenset()
    assert leaks(path.read_text(encoding="utf-8"), allowed) == []
    assert DEFAULT_POSITION in POSITIONS


@pytest.mark.parametrize("source, found", [
    ('if self.head_dim % 2 and self.position in ("rope", "xpos"):\n    pass\n', "'rope'"),
    ("q, k = scheme.rotate_unscaled(q, k, p, p) if isinstance(scheme, XPos) else (q, k)\n", "scheme class XPos"),
    ("if hasattr(scheme, 'span_scales'):\n    pass\n", "hasattr on a scheme"),
    ("scales = scheme.decay_rates(positions)\n", "decay_rates is not declared"),
    ('DEFAULT_POSITION = "rope"\n', "'rope'"),  # allowed only where the test says so
    ('model = ModelConfig(position="none")\n', "'none'"),
])
def test_the_leak_check_finds_what_it_looks_for(source, found):
    assert any(found in leak for leak in leaks(source)), leaks(source)


def test_what_xpos_needs_is_declared_on_the_base_class_with_neutral_defaults():
    bare = PositionScheme(None, d_model=8, n_heads=2, head_dim=4, train_length=8)
    q, k, positions = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.arange(3)
    assert bare.span_scale_rows(positions) is None and bare.span_scales(positions, positions) == (None, None)
    assert all(a is b for a, b in zip(bare.rotate_unscaled(q, k, positions, positions), (q, k)))
    assert not bare.adds_bias and build_position("alibi", {}, d_model=8, n_heads=2, head_dim=4, train_length=8).adds_bias
    with pytest.raises(ValueError, match="position scheme 'xpos' needs an even head dimension, got 3"):
        POSITIONS["xpos"].check_sizes(d_model=6, n_heads=2, head_dim=3, train_length=8)
    ModelConfig(position="rope", d_model=6, n_head=2)  # the config no longer knows; the scheme does
    with pytest.raises(ValueError, match="'rope' needs an even head dimension"):
        LanguageModel(ModelConfig(position="rope", d_model=6, n_head=2))


class Chunked(PositionScheme):
    """A scheme of the test's own that cuts long inputs into spans but has no scales."""
    name = "chunked-test"

    def span_scale_rows(self, positions):
        return 4


def test_a_scheme_that_cuts_spans_runs_on_the_base_class_defaults():
    cfg = ModelConfig(n_layer=1, d_model=16, n_head=2, d_ff=32, vocab_size=31, train_length=16)
    model = LanguageModel(cfg)
    model.position = Chunked(None, d_model=16, n_heads=2, head_dim=8, train_length=16)
    idx = torch.randint(0, 31, (2, 12))
    with torch.no_grad():
        logits, _ = model(idx)
        model.position = build_position("none", {}, d_model=16, n_heads=2, head_dim=8, train_length=16)
        whole, _ = model(idx)
    torch.testing.assert_close(logits, whole)  # span by span, with no scales, is the same attention


def test_a_scheme_needing_other_sizes_stops_the_dag_build(tmp_path):
    from lenex.pipeline.variants import check_model_once, variants_text

    odd = ModelConfig(position="xpos", d_model=6, n_head=2).to_dict()
    with pytest.raises(ValueError, match="'xpos' needs an even head dimension, got 3"):
        check_model_once(variants_text(odd), tmp_path)
    check_model_once(variants_text({**odd, "position": "alibi"}), tmp_path)
    assert len(list((tmp_path / "memo").iterdir())) == 1  # only a check that passed is kept


OCTETS = """
from lenex.positions.base import PositionScheme


class Octets(PositionScheme):
    name = "octets-test"

    @classmethod
    def check_sizes(cls, *, head_dim, **sizes):
        if head_dim % 8:
            raise ValueError(f"position scheme {cls.name!r} needs a head dimension divisible by 8, got {head_dim}")
"""


def test_a_scheme_of_your_own_declares_the_sizes_it_serves(tmp_path, monkeypatch):
    from lenex.experiment.schemes import resolve_entries
    from lenex.pipeline.variants import check_model_once, variants_text

    (tmp_path / "octets.py").write_text(OCTETS)
    monkeypatch.chdir(tmp_path)
    saved = dict(POSITIONS)
    try:
        # The bias probe's toy model (head dimension 4) is skipped, not an error: the models are checked.
        resolve_entries({"mine": {"position": "octets-test", "module": "octets.py"}})
        model = ModelConfig(position="octets-test", position_module="octets.py", d_model=16, n_head=4).to_dict()
        with pytest.raises(ValueError, match="'octets-test' needs a head dimension divisible by 8, got 4"):
            check_model_once(variants_text(model), tmp_path / "stamps")
        check_model_once(variants_text({**model, "n_head": 2}), tmp_path / "stamps")
    finally:
        POSITIONS.clear()
        POSITIONS.update(saved)


def test_every_schema_checks_scheme_names_with_the_registry_pattern():
    preset = yaml.safe_load((SCHEMAS / "preset.schema.yaml").read_text())
    experiment = yaml.safe_load((SCHEMAS / "experiment.schema.yaml").read_text())
    config = yaml.safe_load((SCHEMAS / "config.schema.yaml").read_text())
    patterns = {
        "preset positions": preset["definitions"]["positions"]["propertyNames"]["pattern"],
        "experiment variant position": experiment["properties"]["variants"]["additionalProperties"]["properties"]["position"]["pattern"],
        "extra_schemes position": config["properties"]["extra_schemes"]["additionalProperties"]["properties"]["position"]["pattern"],
    }
    assert patterns == dict.fromkeys(patterns, NAME_PATTERN.pattern)
    assert all(NAME_PATTERN.match(name) for name in [*POSITIONS, example_position()])


def test_the_docs_example_passes_every_schema_that_names_a_scheme(tmp_path):
    position = example_position()
    assert "-" in position  # what the patterns refused before issue 50
    config = {**yaml.safe_load((REPO / "config/config.yaml").read_text()), **example_config()}
    validate(config, SCHEMAS / "config.schema.yaml")
    preset = yaml.safe_load((REPO / "config/presets/tiny.yaml").read_text())
    validate({**preset, "positions": {position: {"scale": 0.25}}}, SCHEMAS / "preset.schema.yaml")
    experiment = yaml.safe_load((REPO / "config/experiments/lex.yaml").read_text())
    experiment["variants"]["mine"] = {"position": position, "position_module": "../schemes/logdist.py"}
    validate(experiment, SCHEMAS / "experiment.schema.yaml")


def test_a_preset_lays_options_under_your_scheme_named_with_a_dash(tmp_path, monkeypatch):
    import shutil

    from docs_scheme import write_example
    from lenex.pipeline.workflow import Pipeline

    workdir = tmp_path / "w"
    for folder in ("config", "workflow/schemas"):
        shutil.copytree(REPO / folder, workdir / folder)
    tiny = (REPO / "config/presets/tiny.yaml").read_text().replace("name: tiny", "name: p")
    (workdir / "config/presets/p.yaml").write_text(tiny + f"positions:\n  {example_position()}: {{scale: 0.25}}\n")
    write_example(workdir)
    monkeypatch.chdir(workdir)  # where the entry's module path starts, as for Snakemake
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    entry = {key: value for key, value in example_config()["extra_schemes"]["mine"].items() if key != "options"}
    saved = dict(POSITIONS)
    try:
        pipeline = Pipeline({**config, "extra_schemes": {"mine": entry}}, workdir, stamps=tmp_path / "stamps")
        assert pipeline.settings.model_config("p", "lex", "mine")["position_options"] == {"scale": 0.25}
    finally:
        POSITIONS.clear()
        POSITIONS.update(saved)


def test_a_scheme_name_outside_the_pattern_is_refused_when_its_module_loads(tmp_path):
    module = tmp_path / "spaced.py"
    module.write_text("from lenex.positions.base import PositionScheme\n\n\n"
                      "class Spaced(PositionScheme):\n    name = 'log distance'\n")
    with pytest.raises(ValueError, match="'log distance' of module .*: a scheme name is letters, digits"):
        POSITIONS.load_module(str(module))
    assert "log distance" not in POSITIONS


def test_code_stamps_find_a_built_in_scheme_named_with_a_dash():
    from lenex.pipeline.code import _MEMBER

    assert _MEMBER.findall('class LogDistance(PositionScheme):\n    name = "log-distance"\n') == ["log-distance"]
