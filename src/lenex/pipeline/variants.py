"""Checks an experiment's variants against the registries when the workflow's DAG is built, so
a bad position scheme, mask or option stops `snakemake -n` with one line, before any job runs
(and before Snakemake removes the old output of a job that could never succeed).

The registries import torch (~1.4 s), which the scheduler needs for nothing else: a check that
passed is kept (lenex.pipeline.memo) under the hash of what it depends on (the variants and the
registries' code), and the next run with the same inputs skips the import. (Your own schemes, config
`extra_schemes`, are checked when they are loaded: lenex.experiment.schemes.)
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

from ..config import ModelConfig, required_fields
from ..experiment.schemes import module_files
from .memo import files_digest, remembered

# What a variant check reads besides the variants: the registries and their options.
REGISTRY_CODE = ("config.py", "registry.py", "pipeline/variants.py", "masks", "positions")
CHECK = "variants-check"  # the kind of result lenex.pipeline.memo keeps for a check that passed


def check_variant(spec: dict) -> None:
    """Raise one ValueError naming the bad value of a variant {position, position_options,
    mask, mask_options, ...}: an unknown scheme or mask, an unknown option key, a bad option value;
    for a whole model config (it has a d_model), sizes its scheme cannot serve."""
    from ..masks import MASKS, build_mask  # torch: only when no stamp says these variants passed
    from ..positions import POSITIONS, make_options, scheme_module

    name = spec["position"]
    scheme_module(name, spec.get("position_module"))  # an unknown scheme: one error naming it
    make_options(name, POSITIONS[name].Options, spec.get("position_options"))
    if "d_model" in spec:
        model = ModelConfig.from_dict(spec)
        POSITIONS[name].check_sizes(d_model=model.d_model, n_heads=model.n_head, head_dim=model.head_dim,
                                    train_length=model.train_length)
    mask = spec.get("mask", "causal")
    if mask not in MASKS:
        raise ValueError(MASKS.unknown(mask))
    options = dict(spec.get("mask_options") or {})
    options_cls = MASKS[mask].Options
    known = {f.name for f in dataclasses.fields(options_cls)}
    if all(p in options for p in required_fields(options_cls)) or set(options) - known:
        build_mask(mask, options)  # names an unknown key or a bad value
    # Otherwise the missing options (a block, a window) come from the preset when the job runs.


def check_variants(variants: dict, where: str, what: str = "variant") -> None:
    """check_variant for every variant; the error names `where` (the file) and the variant (`what`
    it is: a preset's scheme options are checked as variants too)."""
    for variant, spec in variants.items():
        try:
            check_variant(spec)
        except ValueError as err:
            raise ValueError(f"{where}: {what} {variant!r}: {err}") from None


def registry_files() -> list[Path]:
    """The files a variant check reads besides the variants: the registries and their options."""
    root = Path(__file__).parents[1]  # src/lenex: the registries are its positions/ and masks/
    files = []
    for name in REGISTRY_CODE:
        path = root / name
        files += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return files


def variants_text(variants: dict) -> str:
    """The variants as the key of their check (sorted JSON)."""
    return json.dumps(variants, sort_keys=True, default=str)


def check_fingerprint(variants: dict) -> str:
    """sha256 of the variants and the registries' code: a check's result depends on nothing else."""
    return files_digest(CHECK, registry_files(), variants_text(variants))


def check_variants_once(variants: dict, where: str, stamps: Path, what: str = "variant") -> None:
    """check_variants, skipped where the same variants passed before with the same registries' code
    (kept under `stamps` by lenex.pipeline.memo; a failed check is never kept)."""
    remembered(stamps, CHECK, registry_files(), lambda: check_variants(variants, where, what) or True,
               variants_text(variants))


@functools.cache
def _registry_digest() -> str:
    # Once per DAG build: every training's model check is keyed on it (the registries do not change mid-build).
    return files_digest(CHECK, registry_files())


@functools.cache
def check_model_once(model_text: str, stamps: Path) -> None:
    """check_variant of one model config (sorted JSON, as `variants_text` writes it) as a training
    gets it, so a scheme's `check_sizes` stops the DAG build, kept like the variant checks (the key
    adds the scheme's own file, if any). Once per process: trainings of several seeds share a model."""
    model = json.loads(model_text)
    remembered(stamps, CHECK, module_files(model), lambda: check_variant(model) or True,
               f"{_registry_digest()} {model_text}")
