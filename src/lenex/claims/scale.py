"""Claims whose phenomenon needs more training than a preset gives its models.

The scale study (`python -m lenex.scale_study`, results/scale-study/points.jsonl) records, for each
headline failure of the papers (e.g. RoPE blowing up beyond L_tr), ppl(k L_tr) / ppl(L_tr) against
training tokens and model shape. A claim that names its phenomena (`scale:` in
config/claims/<paper>.yaml) and fails on ours is compared with the study's points at the multiple
of L_tr it reads and at the shapes of the models it reads (any shape when the study has none of
them). It is marked untestable at this scale when the study does not see those phenomena at the
preset's budget, with the study's numbers as the reason; when the study does see them at that budget,
the failure stands and the same numbers are written beside it (a failure not explained by budget);
when the preset trains beyond every budget the study ran and none of them shows the phenomenon, the
failure stands too, said so.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..scale_record import scores_of  # where a point keeps each protocol's scores
from .predicates import threshold as threshold_value


@dataclass(frozen=True)
class Budget:
    """What a preset's models train on (at least `tokens`; `shape`: the paper's own model,
    <layers>x<width>; `by_variant`: each named variant's {tokens, shape}), and the study's
    points to compare them with (lenex.presets.scale_budget writes the numbers)."""
    tokens: int
    tokenizer: str
    points: tuple[dict, ...]
    by_variant: dict[str, dict] = field(default_factory=dict)
    shape: str | None = None

    @classmethod
    def from_dict(cls, budget: dict, tokenizer: str, points: tuple[dict, ...]) -> "Budget":
        return cls(int(budget["tokens"]), tokenizer, points, budget.get("by_variant", {}), budget.get("shape"))

    def for_variants(self, names: list[str] | None) -> tuple[int, set[str], str]:
        """(tokens, shapes, what trains them in words) for a claim that reads the models of
        `names` (the fewest tokens of theirs, all their shapes), or the paper's smallest budget
        and own shape when the claim names none."""
        if not names:
            at = f" at {self.shape}" if self.shape else ""
            return self.tokens, {self.shape} - {None}, f"this preset trains {self.tokens:,} tokens per model{at}"
        unknown = [n for n in names if n not in self.by_variant]
        if unknown:
            known = ", ".join(sorted(self.by_variant)) or "none given (--budget)"
            raise ValueError(f"scale.variants names {unknown[0]!r}, not a variant of this paper; known: {known}")
        tokens = min(int(self.by_variant[n]["tokens"]) for n in names)
        shapes = {self.by_variant[n]["shape"] for n in names}
        return tokens, shapes, (f"the models it reads ({', '.join(names)}) train {tokens:,} tokens each "
                                f"at {', '.join(sorted(shapes))}")


def load_points(path: str | Path) -> tuple[dict, ...]:
    """The study's recorded points (one JSON object per line); an error names the file and line."""
    points = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            points.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not valid JSON: {err}") from err
    return tuple(points)


def ratio_at(point: dict, multiple, protocol: str = "lex") -> float | None:
    """A point's ppl(k L_tr) / ppl(L_tr) scored with `protocol`, None where it has none."""
    value = (scores_of(point, protocol) or {}).get("ratio", {}).get(f"{multiple:g}")
    return None if value is None else float(value)


def _describe(point: dict, multiple, protocol: str = "lex") -> str:
    scored = "" if protocol == "lex" else f" (the {protocol} protocol)"
    return (f"{point['shape']}, {point['tokenizer']}, {point['tokens_seen']:,} tokens: "
            f"ppl({multiple:g} L_tr) / ppl(L_tr){scored} = {ratio_at(point, multiple, protocol):.3f}")


def first_showing(points, phenomenon: str, multiple, least: float, tokenizer: str,
                  shapes: set[str] | None = None, protocol: str = "lex") -> tuple[dict | None, list[dict]]:
    """The point with the fewest training tokens whose ratio at `multiple` reaches `least`, among
    the phenomenon's points scored with `protocol` with the preset's tokenizer (all its points
    when the study has none with it) at the models' `shapes` (all shapes when it has none there),
    and the points searched. A phenomenon the study never scored so at `multiple` is an error."""
    runs = [p for p in points if p["phenomenon"] == phenomenon and ratio_at(p, multiple, protocol) is not None]
    if not runs:
        raise ValueError(f"the scale study has no point of {phenomenon!r} at {multiple:g} x L_tr "
                         f"scored with the {protocol} protocol")
    runs = [p for p in runs if p["tokenizer"] == tokenizer] or runs
    runs = [p for p in runs if p["shape"] in (shapes or ())] or runs
    showing = [p for p in runs if ratio_at(p, multiple, protocol) >= least]
    first = min(showing, key=lambda p: (p["tokens_seen"], p["params"])) if showing else None
    return first, runs


@dataclass(frozen=True)
class ScaleNote:
    """What the study says of a failing claim at a preset's budget: `untestable` here or not, `why`
    in words, and the two budgets as numbers (`first_seen_tokens`: the fewest tokens at which the
    study sees every phenomenon of the claim, None when it never sees one of them) for pages that
    weigh how far a preset is from showing it."""
    untestable: bool
    why: str
    trained_tokens: int
    first_seen_tokens: int | None

    def facts(self) -> dict:
        return {"trained_tokens": self.trained_tokens, "first_seen_tokens": self.first_seen_tokens}


def scale_note(spec: dict, budget: Budget) -> ScaleNote:
    """Whether the preset's budget is below the first budget at which the study sees every
    phenomenon of `spec` ({phenomena, multiple: the multiple of L_tr the claim reads, threshold},
    and `variants`: the models the claim reads, whose budget and shapes are the ones compared;
    the paper's smallest budget and own shape without it), and why."""
    multiple, name, protocol = spec["multiple"], spec["threshold"], spec.get("protocol", "lex")
    least = threshold_value(name)
    tokens, shapes, who = budget.for_variants(spec.get("variants"))
    below, notes, firsts = False, [], []
    for phenomenon in spec["phenomena"]:
        first, runs = first_showing(budget.points, phenomenon, multiple, least, budget.tokenizer, shapes, protocol)
        reach = f"{phenomenon} reach `{name}` (ratio >= {least:g})"
        if shapes and not any(p["shape"] in shapes for p in runs):
            reach += f" (it has no such point at {', '.join(sorted(shapes))}; its other shapes speak)"
        if first is None:
            most = max(runs, key=lambda p: (p["tokens_seen"], ratio_at(p, multiple, protocol)))
            below = below or tokens <= most["tokens_seen"]
            notes.append(f"the scale study never sees {reach}; at its largest budget, "
                         f"{_describe(most, multiple, protocol)}")
            firsts.append(None)
        else:
            below = below or tokens < first["tokens_seen"]
            notes.append(f"the scale study first sees {reach} at {_describe(first, multiple, protocol)}")
            firsts.append(int(first["tokens_seen"]))
    trained = f"{who} ({budget.tokenizer})"
    first_seen = None if None in firsts else max(firsts)
    if below:
        head = "untestable at this scale"
    elif first_seen is None:
        head = "a failure beyond every budget the study ran, none of which shows it"
    else:
        head = "a failure at a budget the study sees it at"
    return ScaleNote(below, f"{head}: " + "; ".join(notes) + f"; {trained}", tokens, first_seen)
