"""What the emergence curves say about a claim (docs/emergence.md).

The scale study's tools write `emergence.json` beside each emergence page: per effect, the claim it
reads, where it was measured (`source`: a sweep of the claim's own models, or the scale study's
budget series of its own schemes), the trend's class and slope per doubling by the forecasts' rule
(each seed fitted alone), the old rule's pooled line and class beside it (`pooled`: the rule changed
after the data, so the old reading stays visible), and the page that forecasts the effect toward
the claim's threshold (`forecast`). The claims read those committed records as files (no import of
the tool that wrote them: the library sits below it) and put each claim's readings beside its
verdict.
"""
from __future__ import annotations

from pathlib import Path

from ..files import read_json
from ..records.checks import check_finite

#: The committed records, relative to the checkout: the scale study's own series, then each sweep's.
PATTERNS = ("results/scale-study/emergence.json", "results/scale-study/sweeps/*/emergence.json")
SWEEP = "sweep "  # a reading's `source` starts so when the claim's own models were swept


def emergence_files(root: str | Path = ".") -> list[str]:
    """The records that exist under `root`, sorted (a sweep not yet run has none: its claims say
    what it would cost instead)."""
    root = Path(root)
    return sorted(str(p.relative_to(root)) for pattern in PATTERNS for p in root.glob(pattern))


def _checked(effect: dict, path) -> dict:
    """One effect as the claims use it, every number in it checked finite where it is read
    (lenex.records.checks: a NaN slope would print as a trend)."""
    keep = ("claim", "source", "subject", "variable", "values", "paper", "class", "trend", "pooled", "forecast",
            "contrast", "note")
    reading = {k: effect.get(k) for k in keep}
    check_finite(reading, f"{path}: the reading of {effect.get('claim')!r}")
    return reading


def readings_by_claim(paths: list[str | Path]) -> dict[str, list[dict]]:
    """claim id -> its readings, in the order of `paths` (each file's `effects`)."""
    found: dict[str, list[dict]] = {}
    for path in paths:
        for effect in read_json(path)["effects"]:
            found.setdefault(effect["claim"], []).append(_checked(effect, path))
    return found


def _g(x: float) -> str:
    return f"{x:,.3g}"


def _interval(low, high) -> str:
    return "no interval" if low is None else f"95% [{low:+.4f}, {high:+.4f}]"


def reading_text(r: dict) -> str:
    """'sweep rf-shift-budget, rf-alibi-shift-6: flat with train_tokens (slope +0.0350 per doubling,
    95% [-0.0050, +0.0760], 3 seeds fitted alone; old rule, one pooled line: grows, 95% [+0.0103,
    +0.0500]); forecast toward the claim's threshold: results/scale-study/sweeps/predictions.md'."""
    where = f"{r['source']}, {r['subject']}"
    if r.get("contrast") and r["class"]:
        return f"{where}: {contrast_text(r)}"
    if r["trend"] is None:
        return f"{where}: {r['note'] or 'no trend'}"
    t, pooled = r["trend"], r.get("pooled")
    seeds = f"{t['seeds']} seed{'s' if t['seeds'] != 1 else ''} fitted alone"
    old = ("" if pooled is None else
           f"; old rule, one pooled line: {pooled['class']}, "
           f"{_interval(pooled['trend']['low'], pooled['trend']['high'])}")
    text = (f"{where}: {r['class'] or 'no class'} with {r['variable']} (slope {t['slope']:+.4f} per doubling, "
            f"{_interval(t['low'], t['high'])}, {seeds}{old})")
    return text + (f"; forecast toward the claim's threshold: {r['forecast']}" if r.get("forecast") else "")


def paired_difference(r: dict) -> str:
    """A corpus reading's paired difference: 'e(arxiv) − e(pg22) = -0.2100' (the predictions page
    gives it too)."""
    first, second = r["values"]
    return f"e({second}) − e({first}) = {r['contrast']['mean']:+.4f}"


def contrast_text(r: dict) -> str:
    """A corpus sweep's reading: 'differs between corpora (e(arxiv) − e(pg22) = -0.2100, 95% [-0.3000,
    -0.1200], 3 paired seeds)'."""
    c = r["contrast"]
    return (f"{r['class']} between corpora ({paired_difference(r)}, 95% "
            f"[{c['low']:+.4f}, {c['high']:+.4f}], {c['seeds']} paired seeds)")


def emergence_text(readings: list[dict]) -> str:
    return "emergence: " + "; ".join(reading_text(r) for r in readings)


def measured_reason(readings: list[dict]) -> str | None:
    """The summary's group of a contradicted claim a sweep of its own models measured: per variable
    the classes of its readings, e.g. 'contradicted; a train_tokens sweep measured it: trend flat'
    or '...; a corpus sweep measured it: differs between corpora'; where the old pooled line's
    classes differ, they follow, labelled ('trend flat (old rule, pooled line: grows)'). None when
    only the scale study's series (other schemes) read it."""
    own = [r for r in readings if r["source"].startswith(SWEEP) and r["class"]]
    if not own:
        return None
    found = []
    for variable in dict.fromkeys(r["variable"] for r in own):
        mine = [r for r in own if r["variable"] == variable]
        classes = " / ".join(dict.fromkeys(r["class"] for r in mine))
        if variable == "corpus":
            found.append(f"a corpus sweep measured it: {classes} between corpora")
            continue
        old = " / ".join(dict.fromkeys(r["pooled"]["class"] for r in mine if r.get("pooled")))
        found.append(f"a {variable} sweep measured it: trend {classes}"
                     + (f" (old rule, pooled line: {old})" if old and old != classes else ""))
    return "contradicted; " + "; ".join(found)
