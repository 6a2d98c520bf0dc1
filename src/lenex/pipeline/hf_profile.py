"""The Hugging Face extrapolation profile's settings (rules in hf_profile.smk; docs/hf-profile.md):
the models and scales of config/hf_models.yaml, checked against its schema when first read. A
mixin of `lenex.pipeline.workflow.Pipeline`."""

from __future__ import annotations

import functools
import shlex

from ..files import read_yaml
from .settings import quoted_json, validate
from .user_errors import known, refuse

#: What a scale of config/hf_models.yaml leaves out.
HF_SCALE_DEFAULTS = {"resolution_tokens": 2048, "batch_tokens": 4096, "threads": 1}


class HFProfile:
    @functools.cache
    def hf_models_config(self) -> dict:
        """config/hf_models.yaml: the Hugging Face models lenex.hf.profile can profile, and its scales."""
        values = read_yaml(self.config_dir / "hf_models.yaml")
        validate(values, self.schemas / "hf_models.schema.yaml", self.config_dir / "hf_models.yaml")
        return values

    def hf_entry(self, section: str, key: str, what: str) -> dict:
        """One entry of config/hf_models.yaml's `section`, or one error naming what is known."""
        entries = self.hf_models_config()[section]
        if key not in entries:
            refuse(f"config/hf_models.yaml: unknown {what} {key!r} in {section}; known: {known(entries)}")
        return entries[key]

    def hf_model(self, name: str) -> dict:
        return self.hf_entry("models", name, "Hugging Face model")

    def hf_scale(self, preset_name: str) -> dict:
        return {**HF_SCALE_DEFAULTS, **self.hf_entry("scales", preset_name, "preset")}

    def hf_eot_option(self, name: str) -> str:
        """--eot-token where the model's entry names its document separator."""
        entry = self.hf_model(name)
        return f"--eot-token {shlex.quote(entry['eot_token'])}" if "eot_token" in entry else ""

    def hf_source(self, name: str) -> str:
        """The entry as lenex.hf.models reads it (gguf/hub plus an optional context_length), quoted JSON."""
        entry = self.hf_model(name)
        return quoted_json({k: entry[k] for k in ("gguf", "hub", "context_length") if k in entry})
