# Helpers of the Hugging Face extrapolation profile (rules in hf_profile.smk; docs/hf-profile.md):
# the models and scales of config/hf_models.yaml, checked against its schema when first read.


@functools.cache
def hf_models_config():
    """config/hf_models.yaml: the Hugging Face models lenex.hf.profile can profile, and its scales."""
    values = read_yaml(CONFIG_DIR / "hf_models.yaml")
    validate(values, str(SCHEMAS / "hf_models.schema.yaml"))
    return values


def hf_entry(section, key, what):
    """One entry of config/hf_models.yaml's `section`, or one error naming what is known."""
    entries = hf_models_config()[section]
    if key not in entries:
        raise ValueError(
            f"config/hf_models.yaml: unknown {what} {key!r} in {section}; "
            f"known: {', '.join(entries)}"
        )
    return entries[key]


def hf_model(name):
    return hf_entry("models", name, "Hugging Face model")


HF_SCALE_DEFAULTS = {"resolution_tokens": 2048, "batch_tokens": 4096, "threads": 1}


def hf_scale(preset_name):
    return {**HF_SCALE_DEFAULTS, **hf_entry("scales", preset_name, "preset")}


def hf_source(name):
    """The entry as lenex.hf.models reads it: gguf/hub plus an optional context_length."""
    entry = hf_model(name)
    keys = ("gguf", "hub", "context_length")
    return quoted_json({k: entry[k] for k in keys if k in entry})
