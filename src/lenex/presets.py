"""Scale presets seen from one paper.

A preset (config/presets/<name>.yaml) gives one scale for every paper: `model`, `train`,
`eval`, `resources`. The three papers do not share hyper-parameters (LEX trains 24 x 1024 at
L_tr = 1024; the receptive-field paper 12 x 768 at L_tr = 512), so a preset may carry, under
`papers: {<paper>: {...}}`, what one paper changes. `paper_view` merges the two; data settings
(`data`) are not overridable: one tokenized corpus serves every paper of a preset.
"""

from __future__ import annotations

import copy

#: Sections a paper may override; everything else of the preset is shared by all papers.
OVERRIDABLE = ("model", "train", "eval", "resources", "experiment")


def deep_merge(base: dict, override: dict) -> dict:
    """A new dict: `base` with `override` laid over it, nested dicts merged key by key."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def paper_view(preset: dict, paper: str) -> dict:
    """The preset as `paper` sees it: its `papers.<paper>` block merged over the shared sections.

    The result has no `papers` key, and `paper` set, so a header or a plan built from it says
    which paper's scale it is."""
    overrides = (preset.get("papers") or {}).get(paper) or {}
    bad = sorted(set(overrides) - set(OVERRIDABLE))
    if bad:
        raise ValueError(f"preset {preset.get('name')!r}: papers.{paper} may not override {bad[0]!r}; "
                         f"overridable: {', '.join(OVERRIDABLE)}")
    view = {k: v for k, v in preset.items() if k != "papers"}
    view = deep_merge(view, overrides)
    view["paper"] = paper
    return view
