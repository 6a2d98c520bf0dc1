"""The Hugging Face extrapolation profile's settings (rules in hf_profile.smk; docs/hf-profile.md):
the models and scales of config/hf_models.yaml, checked against its schema when first read. A
part of `lenex.pipeline.workflow.Pipeline` (`pipeline.hf`)."""

from __future__ import annotations

import functools
import shlex

from ..files import read_yaml
from .settings import quoted_json, validate
from .user_errors import known, refuse

#: What a scale of config/hf_models.yaml leaves out.
HF_SCALE_DEFAULTS = {"resolution_tokens": 2048, "batch_tokens": 4096, "threads": 1}


class HFProfile:
    """The profile's settings, read from config/ and checked against workflow/schemas/ of `settings`."""

    def __init__(self, settings):
        self.settings = settings

    @functools.cache
    def models_config(self) -> dict:
        """config/hf_models.yaml: the Hugging Face models lenex.hf.profile can profile, and its scales."""
        path = self.settings.config_dir / "hf_models.yaml"
        values = read_yaml(path)
        validate(values, self.settings.schemas / "hf_models.schema.yaml", path)
        return values

    def entry(self, section: str, key: str, what: str) -> dict:
        """One entry of config/hf_models.yaml's `section`, or one error naming what is known."""
        entries = self.models_config()[section]
        if key not in entries:
            refuse(f"config/hf_models.yaml: unknown {what} {key!r} in {section}; known: {known(entries)}")
        return entries[key]

    def model(self, name: str) -> dict:
        return self.entry("models", name, "Hugging Face model")

    def scale(self, preset_name: str) -> dict:
        return {**HF_SCALE_DEFAULTS, **self.entry("scales", preset_name, "preset")}

    def eot_option(self, name: str) -> str:
        """--eot-token where the model's entry names its document separator."""
        entry = self.model(name)
        return f"--eot-token {shlex.quote(entry['eot_token'])}" if "eot_token" in entry else ""

    def source(self, name: str) -> str:
        """The entry as lenex.hf.models reads it (gguf/hub plus an optional context_length), quoted JSON."""
        entry = self.model(name)
        return quoted_json({k: entry[k] for k in ("gguf", "hub", "context_length") if k in entry})
