"""Claims whose phenomenon may need more training, or a larger model, than a preset gives.

The scale study (`snakemake scale_study --config scale_study=True`, results/scale-study/points.jsonl) records, for each
headline failure of the papers (e.g. RoPE blowing up beyond L_tr), ppl(k L_tr) / ppl(L_tr) against
training tokens and model shape. A claim that names its phenomena (`scale:` in
config/claims/<paper>.yaml) and is contradicted on ours is looked up at every multiple of L_tr it
names (a multiple beyond the study's: the study's largest below it, said so). Only positive evidence
makes it untestable at this scale: a recorded point that SHOWS a phenomenon (its ratio reaches the
claim's threshold) at a larger budget or a larger shape than the run's models', while no point at or
below the run's scale shows it; the record quotes that point. A phenomenon the study shows within
the run's scale leaves the contradiction standing; one it never shows at any budget it ran leaves it
standing too, with those budgets listed ("contradicted at every budget tried").
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..records.checks import check_record
from ..records.scale_record import scores_of  # where a point keeps each protocol's scores
from .predicates import threshold as threshold_value


@dataclass(frozen=True)
class Budget:
    """What a preset's models train on (at least `tokens`; `shape`: the paper's own model,
    <layers>x<width>; `by_variant`: each named variant's {tokens, shape}), and the study's
    points to compare them with (lenex.experiment.presets.scale_budget writes the numbers)."""
    tokens: int
    tokenizer: str
    points: tuple[dict, ...]
    by_variant: dict[str, dict] = field(default_factory=dict)
    shape: str | None = None

    @classmethod
    def from_dict(cls, budget: dict, tokenizer: str, points: tuple[dict, ...]) -> "Budget":
        return cls(int(budget["tokens"]), tokenizer, points, budget.get("by_variant", {}), budget.get("shape"))

    def schemes(self, names: list[str] | None) -> list[dict]:
        """The scheme fields of the named variants' models (what a study point must match to speak
        for them), where the budget carries them."""
        return [self.by_variant[n]["scheme"] for n in names or () if "scheme" in self.by_variant.get(n, {})]

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
        check_record(points[-1], f"{path}:{number}")  # finite, in its domain, before a claim compares it
    return tuple(points)


def ratio_at(point: dict, multiple, protocol: str = "lex") -> float | None:
    """A point's ppl(k L_tr) / ppl(L_tr) scored with `protocol`, None where it has none."""
    value = (scores_of(point, protocol) or {}).get("ratio", {}).get(f"{multiple:g}")
    return None if value is None else float(value)


def _describe(point: dict, multiple, protocol: str = "lex") -> str:
    scored = "" if protocol == "lex" else f" (the {protocol} protocol)"
    return (f"`{point.get('key', point['phenomenon'])}`: {point['shape']}, {point['tokenizer']}, "
            f"{point['tokens_seen']:,} tokens: ppl({multiple:g} L_tr) / ppl(L_tr){scored} = "
            f"{ratio_at(point, multiple, protocol):.3f}")


def same_scheme(point: dict, schemes: list[dict]) -> bool:
    """A study point speaks for a claim's models only if it trained the same scheme: its recorded
    position scheme and options, mask and options and L_tr equal one of the models' (`schemes`; no
    schemes given: any point). A point of ALiBi with other slopes, or of RoPE at another L_tr, is
    another model, and no evidence about these."""
    if not schemes:
        return True
    recorded = point.get("model_config") or {}
    mine = {k: recorded.get(k) or ({} if k.endswith("options") else None) for k in schemes[0]}
    return any(mine == scheme for scheme in schemes)


def first_showing(points, phenomenon: str, multiple, least: float, tokenizer: str,
                  shapes: set[str] | None = None, protocol: str = "lex") -> tuple[dict | None, list[dict]]:
    """The point with the fewest training tokens whose ratio at `multiple` reaches `least`, among
    the phenomenon's points scored with `protocol` with the preset's tokenizer (all its points
    when the study has none with it) at the models' `shapes` (all shapes when it has none there),
    and the points searched (the scale study's write-up, lenex.scale_study.report). A phenomenon the
    study never scored so at `multiple` is an error."""
    runs = [p for p in points if p["phenomenon"] == phenomenon and ratio_at(p, multiple, protocol) is not None]
    if not runs:
        raise ValueError(f"the scale study has no point of {phenomenon!r} at {multiple:g} x L_tr "
                         f"scored with the {protocol} protocol")
    runs = [p for p in runs if p["tokenizer"] == tokenizer] or runs
    runs = [p for p in runs if p["shape"] in (shapes or ())] or runs
    showing = [p for p in runs if ratio_at(p, multiple, protocol) >= least]
    first = min(showing, key=lambda p: (p["tokens_seen"], p["params"])) if showing else None
    return first, runs


def shape_size(shape: str) -> int:
    """layers x width^2 of a `<layers>x<width>` shape: what grows a model's non-embedding weights."""
    try:
        layers, width = (int(x) for x in shape.split("x"))
    except (AttributeError, ValueError) as err:
        raise ValueError(f"a shape is <layers>x<width>, got {shape!r}") from err
    return layers * width * width


def study_points(points, phenomenon: str, multiple, protocol: str = "lex") -> tuple[list[dict], float]:
    """The phenomenon's points scored with `protocol` and the multiple they are read at: `multiple`
    itself, or the study's largest below it (a blow-up beyond L_tr grows with the length). None
    there is an error."""
    scored = [p for p in points if p["phenomenon"] == phenomenon and (scores_of(p, protocol) or {}).get("ratio")]
    have = sorted({float(k) for p in scored for k in scores_of(p, protocol)["ratio"] if 1 < float(k) <= multiple})
    if not have:
        raise ValueError(f"the scale study has no point of {phenomenon!r} at {multiple:g} x L_tr "
                         f"(or a multiple between 1 and it) scored with the {protocol} protocol")
    read = multiple if multiple in have else have[-1]
    return [p for p in scored if ratio_at(p, read, protocol) is not None], read


@dataclass(frozen=True)
class Finding:
    """What the study says of one phenomenon at a run's scale: `status` within (it shows at or below
    the run's budget and shape), beyond (only at a larger budget or shape: `point` quoted) or never
    (at no budget it ran: `budgets`), in words (`why`)."""
    status: str
    why: str
    point: dict | None
    first_tokens: int | None
    budgets: tuple[int, ...]
    read: float | None = None  # the multiple at which `point` shows it


def find(points, phenomenon: str, multiples, least: float, name: str, tokenizer: str, tokens: int,
         shapes: set[str], protocol: str = "lex", schemes: list[dict] | None = None) -> Finding:
    """The study's evidence on `phenomenon` reaching `least` at any of `multiples` for a run that
    trains `tokens` at `shapes` (its largest counts; no shape: budgets alone compare) with
    `tokenizer`. The points of the preset's tokenizer that show it speak; where none of them does,
    those of the study's other tokenizers (never seen means by no point of the study). Shown at or
    below the run's budget and shape: within; else only beyond it (a larger budget or shape)."""
    largest = max((shape_size(s) for s in shapes), default=None)
    points = [p for p in points if same_scheme(p, schemes or [])]
    if not any(p["phenomenon"] == phenomenon for p in points):
        return Finding("never", f"the scale study has no point of {phenomenon} with these models' scheme, "
                       "options and L_tr: it has tried no budget of them", None, None, ())
    showing, budgets, reads = [], set(), []
    for multiple in multiples:
        try:
            runs, read = study_points(points, phenomenon, multiple, protocol)
        except ValueError:  # the study scored this phenomenon only at larger multiples: no evidence here
            reads.append(f"{multiple:g} (not measured by the study)")
            continue
        reads.append(f"{multiple:g}" if read == multiple else f"{multiple:g} (read at the study's {read:g})")
        budgets |= {int(p["tokens_seen"]) for p in runs}
        showing += [(p, read) for p in runs if ratio_at(p, read, protocol) >= least]
    reach = f"{phenomenon} reach `{name}` (ratio >= {least:.3g}) at {', '.join(reads)} x L_tr"
    if not showing:
        listed = ", ".join(f"{b:,}" for b in sorted(budgets))
        return Finding("never", f"the scale study never sees {reach} at any budget it ran ({listed} tokens)",
                       None, None, tuple(sorted(budgets)))
    order = lambda pr: (pr[0]["tokens_seen"], pr[0]["params"])  # noqa: E731
    showing = [pr for pr in showing if pr[0]["tokenizer"] == tokenizer] or showing
    first = min(showing, key=order)
    within = [pr for pr in showing if pr[0]["tokens_seen"] <= tokens
              and (largest is None or shape_size(pr[0]["shape"]) <= largest)]
    if within:
        point, read = min(within, key=order)
        return Finding("within", f"the scale study sees {reach} within this run's scale: {_describe(point, read, protocol)}",
                       point, int(first[0]["tokens_seen"]), tuple(sorted(budgets)), read)
    point, read = first
    return Finding("beyond", f"the scale study sees {reach} only beyond this run's budget or shape: "
                   f"{_describe(point, read, protocol)}", point, int(point["tokens_seen"]), tuple(sorted(budgets)), read)


@dataclass(frozen=True)
class ScaleNote:
    """What the study says of a contradicted claim at a preset's scale: `untestable` here or not,
    `why` in words, and as numbers for pages that weigh the gap: the run's budget, the fewest tokens
    at which the study shows every phenomenon (None when one is never shown), the point quoted for
    an untestable claim, and the budgets tried for a phenomenon never shown."""
    untestable: bool
    why: str
    trained_tokens: int
    first_seen_tokens: int | None
    quoted: dict | None = None
    never_seen_budgets: tuple[int, ...] | None = None

    def facts(self) -> dict:
        return {"trained_tokens": self.trained_tokens, "first_seen_tokens": self.first_seen_tokens,
                "quoted": self.quoted,
                "never_seen_budgets": None if self.never_seen_budgets is None else list(self.never_seen_budgets)}


def _quote(point: dict, read, protocol: str) -> dict:
    return {"key": point.get("key"), "tokens": int(point["tokens_seen"]), "shape": point["shape"],
            "tokenizer": point["tokenizer"], "multiple": read, "ratio": ratio_at(point, read, protocol)}


def scale_note(spec: dict, budget: Budget, words: dict[str, float] | None = None) -> ScaleNote:
    """Whether a claim contradicted on ours is untestable at this scale: only when the study shows
    one of its phenomena (`spec`: {phenomena, multiples, threshold, protocol, variants}) beyond the
    run's budget or shape and not within them. `words`: the claim's threshold values (default:
    lenex.claims.predicates.THRESHOLDS)."""
    name, protocol = spec["threshold"], spec.get("protocol", "lex")
    least = words[name] if words and name in words else threshold_value(name)
    tokens, shapes, who = budget.for_variants(spec.get("variants"))
    schemes = budget.schemes(spec.get("variants"))
    findings = [find(budget.points, p, spec["multiples"], least, name, budget.tokenizer, tokens, shapes, protocol,
                     schemes) for p in spec["phenomena"]]
    beyond = [f for f in findings if f.status == "beyond"]
    never = [f for f in findings if f.status == "never"]
    if beyond:
        head = "untestable at this scale"
    elif never and len(never) == len(findings):
        tried = sorted({b for f in never for b in f.budgets})
        # Only a budget the study ran speaks: with none, say so rather than "every budget tried".
        head = ("contradicted at every budget tried" if tried else "contradicted; the scale study has tried no budget of these models")
    else:
        head = "contradicted within the scale at which the study shows its phenomenon"
    quoted = _quote(beyond[0].point, beyond[0].read, protocol) if beyond else None
    firsts = [f.first_tokens for f in findings]
    why = f"{head}: " + "; ".join(f.why for f in findings) + f"; {who} ({budget.tokenizer})"
    return ScaleNote(bool(beyond), why, tokens, None if None in firsts else max(firsts), quoted,
                     tuple(sorted({b for f in never for b in f.budgets})) if never else None)
