"""Checks an experiment's variants against the registries when the workflow's DAG is built, so
a bad position scheme, mask or option stops `snakemake -n` with one line, before any job runs
(and before Snakemake removes the old output of a job that could never succeed)."""

from __future__ import annotations

import dataclasses

from .config import required_fields
from .masks import MASKS, build_mask
from .positions import POSITIONS, make_options


def check_variant(spec: dict) -> None:
    """Raise one ValueError naming the bad value of a variant {position, position_options,
    mask, mask_options, ...}: an unknown scheme or mask, an unknown option key, a bad option value."""
    name = spec["position"]
    if name not in POSITIONS:
        raise ValueError(f"unknown position scheme {name!r}; known: {', '.join(sorted(POSITIONS))}")
    make_options(name, POSITIONS[name].Options, spec.get("position_options"))
    mask = spec.get("mask", "causal")
    if mask not in MASKS:
        raise ValueError(f"unknown attention mask {mask!r}; known: {', '.join(sorted(MASKS))}")
    options = dict(spec.get("mask_options") or {})
    options_cls = MASKS[mask].Options
    known = {f.name for f in dataclasses.fields(options_cls)}
    if all(p in options for p in required_fields(options_cls)) or set(options) - known:
        build_mask(mask, options)  # names an unknown key or a bad value
    # Otherwise the missing options (a block, a window) come from the preset when the job runs.


def check_variants(variants: dict, where: str) -> None:
    """check_variant for every variant; the error names `where` (the file) and the variant."""
    for variant, spec in variants.items():
        try:
            check_variant(spec)
        except ValueError as err:
            raise ValueError(f"{where}: variant {variant!r}: {err}") from None
