"""Bring your own position scheme: config `extra_schemes` adds it to every paper as a variant,
and a row (or a section) to every table that declares `compares_schemes` in its experiment file.

    extra_schemes:
      mine: {position: mine, label: Mine, options: {...}, module: path/to/mine.py}

Pure functions of the experiment definition (no torch): the workflow (lenex.pipeline.settings) and every
table or figure renderer call `with_extra_schemes`, so the rows a table reads and the rows it
prints are the same. Only `resolve_entries`, when the DAG is built, imports the registry (and torch)
to try each entry's scheme on a toy model (`check_scheme`). The paper has no number for such a row, so its paper cells print "—".
Docs: docs/bring-your-own.md.
"""

from __future__ import annotations

import copy
import os
import re

#: A scheme's name becomes a variant name and a path part in every paper (segmented model names
#: are the strictest: lower-case words joined by '-').
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
ENTRY_KEYS = {"position", "options", "module", "label"}


def check_entries(extra: dict) -> dict:
    """`extra_schemes` as given, checked: names, keys and types (one error naming the bad one)."""
    if not isinstance(extra, dict):
        raise ValueError(f"extra_schemes must be a mapping of name -> entry, got {extra!r}")
    for name, entry in extra.items():
        where = f"extra_schemes.{name}"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise ValueError(f"{where}: a scheme name is lower-case letters, digits and '-' "
                             f"(it names variants, files and segmented models), got {name!r}")
        if not isinstance(entry, dict) or not isinstance(entry.get("position"), str):
            raise ValueError(f"{where}: needs `position`, a position scheme name, got {entry!r}")
        unknown = sorted(set(entry) - ENTRY_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(sorted(ENTRY_KEYS))}")
        if not isinstance(entry.get("options", {}), dict):
            raise ValueError(f"{where}.options must be a mapping, got {entry['options']!r}")
    return extra


def variant_spec(entry: dict) -> dict:
    """The experiment-file variant of one extra scheme."""
    spec = {"position": entry["position"]}
    if entry.get("options"):
        spec["position_options"] = dict(entry["options"])
    if entry.get("module"):
        spec["position_module"] = entry["module"]
    return spec


def _filled(template, name: str, label: str):
    """A row/section template with {name} and {label} filled in every string, at any depth."""
    if isinstance(template, str):
        return template.format(name=name, label=label)
    if isinstance(template, list):
        return [_filled(item, name, label) for item in template]
    if isinstance(template, dict):
        return {key: _filled(value, name, label) for key, value in template.items()}
    return template


def scheme_row(template: dict, name: str, label: str) -> dict:
    """One table row for scheme `name`: label and method default to the scheme's, variant is it."""
    row = {"label": "{label}", "method": "{name}", **template}
    return {**_filled(row, name, label), "variant": name}


def scheme_section(template: dict, name: str, label: str) -> dict:
    section = {**_filled({k: v for k, v in template.items() if k != "rows"}, name, label)}
    section["rows"] = [scheme_row(row, name, label) for row in template["rows"]]
    return section


def with_extra_schemes(experiment: dict, extra: dict) -> dict:
    """The experiment with each extra scheme as a variant and as rows (`compares_schemes.rows`,
    added to every section) or sections (`compares_schemes.sections`) of the tables that compare
    schemes. With no extra scheme the experiment itself is returned, untouched."""
    if not extra:
        return experiment
    check_entries(extra)
    merged = copy.deepcopy(experiment)  # YAML anchors share row lists between sections
    paper = merged.get("paper", "?")
    for name, entry in extra.items():
        if name in merged["variants"]:
            raise ValueError(f"extra_schemes.{name}: paper {paper!r} already has a variant {name!r}; "
                             "choose another name")
        merged["variants"][name] = variant_spec(entry)
        if merged.get("scheme_group"):  # an extra scheme trains at the budget of the rows it joins
            merged["variants"][name]["group"] = merged["scheme_group"]
    for spec in merged["tables"].values():
        compares = spec.get("compares_schemes")
        if not compares:
            continue
        for name, entry in extra.items():
            label = entry.get("label", name)
            for section in spec["sections"]:
                section["rows"] = section["rows"] + [scheme_row(t, name, label) for t in compares.get("rows", [])]
            spec["sections"] = spec["sections"] + [scheme_section(t, name, label)
                                                   for t in compares.get("sections", [])]
    return merged


def table_extra(experiment: dict, table_key: str, extra: dict) -> dict:
    """The extra schemes one table shows: all of them when it compares schemes, else none (so a
    table that does not compare schemes keeps its inputs and parameters when one is added)."""
    return extra if experiment["tables"][table_key].get("compares_schemes") else {}


def resolve_entries(extra: dict) -> dict:
    """`extra_schemes`, checked against the position registry now (at DAG build): each entry's
    module is imported and must define its `position`; a scheme of lenex/positions/ needs no module
    (it registers itself). An unknown scheme is one error naming the entry."""
    if not extra:
        return {}
    from ..positions import scheme_module  # torch: only when a scheme is configured

    resolved = {}
    for name, entry in check_entries(extra).items():
        try:
            module = scheme_module(entry["position"], entry.get("module"))
        except ValueError as err:
            raise ValueError(f"extra_schemes.{name}: {err}") from None
        check_scheme(name, entry["position"], entry.get("options"))
        resolved[name] = {**entry, **({"module": module} if module else {})}
    return resolved


# A bring-your-own scheme is tried on a few positions before anything trains with it: a `bias` of the
# wrong shape would otherwise fail at step 1 with a raw tensor-size message naming neither the scheme
# nor the shape it should return. Small, distinct sizes: a bias that mixes up heads, queries and keys
# cannot pass by accident.
PROBE = {"n_heads": 2, "head_dim": 4, "queries": 3, "keys": 5}


def bias_shape_problem(shape, n_heads: int, queries: int, keys: int) -> str | None:
    """Why a bias of `shape` cannot be added to (H, Tq, Tk) attention logits, or None."""
    wanted = (n_heads, queries, keys)
    if tuple(shape) == wanted:
        return None
    return (f"its bias(q_pos, k_pos) returned shape {tuple(shape)}; it should return (H, Tq, Tk) = {wanted} "
            f"for {n_heads} heads, {queries} query and {keys} key positions")


def check_scheme(name: str, position: str, options: dict | None = None) -> None:
    """Build the registered scheme `position` with `options` on a toy model and call its bias on
    3 query and 5 key positions: one ValueError naming the entry and the shape it should return."""
    import torch

    from ..positions import POSITIONS
    from ..positions.base import make_options

    cls = POSITIONS[position]
    heads, head_dim = PROBE["n_heads"], PROBE["head_dim"]
    try:
        built = make_options(position, cls.Options, options)
    except ValueError as err:
        raise ValueError(f"extra_schemes.{name}: {err}") from None
    sizes = {"d_model": heads * head_dim, "n_heads": heads, "head_dim": head_dim, "train_length": 64}
    try:
        cls.check_sizes(**sizes)
    except ValueError:
        return  # a scheme that refuses the toy's sizes is tried at its models' own (check_model_once)
    scheme = cls(built, **sizes)
    q_pos = torch.arange(PROBE["keys"] - PROBE["queries"], PROBE["keys"])
    k_pos = torch.arange(PROBE["keys"])
    bias = scheme.bias(q_pos, k_pos)
    if bias is None:
        return
    problem = bias_shape_problem(bias.shape, heads, PROBE["queries"], PROBE["keys"])
    if problem:
        raise ValueError(f"extra_schemes.{name}: position scheme {position!r} ({cls.__module__}): {problem}")


def module_files(variant: dict) -> list[str]:
    """The scheme file a variant's model imports (a training input: editing it retrains); none
    for the papers' own variants."""
    module = variant.get("position_module")
    if not module:
        return []
    if module.endswith(".py"):
        return [module]
    import importlib.util

    found = importlib.util.find_spec(module)
    if found is None or not found.origin:
        return []
    # relative where it lies in the checkout, so a moved checkout reruns nothing
    inside = not os.path.relpath(found.origin).startswith("..")
    return [os.path.relpath(found.origin) if inside else found.origin]
