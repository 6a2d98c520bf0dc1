"""The configs are typed one way: bounds declared on the fields, matching the preset schema."""

import dataclasses
from pathlib import Path

import pytest
import yaml

import lenex.training.train
from lenex.config import ModelConfig, NoOptions, TrainConfig, build_dataclass, required_fields

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "preset.schema.yaml"


@pytest.mark.parametrize("cls, section", [(ModelConfig, "model"), (TrainConfig, "train")])
def test_field_bounds_are_the_schemas(cls, section):
    properties = yaml.safe_load(SCHEMA.read_text())["definitions"][section]["properties"]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    numeric = {k: v for k, v in properties.items() if v.get("type") in ("integer", "number")}
    assert numeric, section
    for key, rule in numeric.items():
        low, high = fields[key].metadata["bounds"]
        assert fields[key].type == ("int" if rule["type"] == "integer" else "float"), key
        if "minimum" in rule:
            assert low == rule["minimum"], key
        if "exclusiveMinimum" in rule:
            assert low == (">", rule["exclusiveMinimum"]), key
        if "maximum" in rule:
            assert high == rule["maximum"], key


def test_train_config_is_the_one_in_config():
    assert lenex.training.train.TrainConfig is TrainConfig
    cfg = TrainConfig.from_dict({"steps": 12.0, "seed": -3, "power": 0.5})
    assert (cfg.steps, type(cfg.steps), cfg.seed) == (12, int, -3)
    assert cfg.to_dict() == dataclasses.asdict(cfg)


def test_build_dataclass_names_unknown_and_missing_keys():
    @dataclasses.dataclass
    class Needs:
        block: int
        scale: float = 1.0

    assert required_fields(Needs) == ["block"] and required_fields(NoOptions) == []
    with pytest.raises(ValueError, match="^thing: unknown option 'blok'; known: block, scale$"):
        build_dataclass(Needs, {"blok": 1}, "option", context="thing: ")
    with pytest.raises(ValueError, match="^thing: missing option 'block'$"):
        build_dataclass(Needs, {"scale": 2.0}, "option", context="thing: ")
    assert build_dataclass(Needs, {"block": 3}, "option") == Needs(3, 1.0)


def test_a_variant_check_that_passed_is_stamped_and_a_changed_variant_is_checked_again(tmp_path, monkeypatch):
    """lenex.pipeline.variants.check_variants_once: the scheduler imports the registries (and torch) only
    when the variants or the registries' code changed since a check passed."""
    from lenex.pipeline.memo import kept_file
    from lenex.pipeline.variants import CHECK, variants_text, check_fingerprint, check_variants_once, registry_files

    def kept(variants):
        return kept_file(tmp_path, CHECK, registry_files(), variants_text(variants))

    good = {"a": {"position": "alibi", "mask": "causal"}}
    check_variants_once(good, "exp.yaml", tmp_path)
    assert list((tmp_path / "memo").iterdir()) == [kept(good)]
    bad = {"a": {"position": "rotary", "mask": "causal"}}
    assert check_fingerprint(bad) != check_fingerprint(good) and kept(bad) != kept(good)
    with pytest.raises(ValueError, match="exp.yaml: variant 'a': unknown position scheme 'rotary'"):
        check_variants_once(bad, "exp.yaml", tmp_path)
    assert len(list((tmp_path / "memo").iterdir())) == 1  # a failed check leaves nothing kept
    retuned = {"a": {"position": "alibi", "mask": "causal", "position_options": {"shift": 1}}}
    assert check_fingerprint(retuned) != check_fingerprint(good)
    import lenex.pipeline.variants

    before = check_fingerprint(good)
    monkeypatch.setattr(lenex.pipeline.variants, "REGISTRY_CODE", ("config.py", "pipeline/variants.py", "masks"))
    assert check_fingerprint(good) != before  # the registries' code is part of what is stamped
