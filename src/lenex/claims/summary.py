"""Counting claim records: the five verdicts on ours, the paper's side, the median effect fraction,
why a claim is untestable, and the bar a preset's claims are held to. The claims pages
(lenex.claims.render) and the reference page (lenex.pipeline.reference) read their numbers from here."""
from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path
from statistics import median

from .counts import counts_table, verdict_counts
from .earlier_scoring import earlier_table
from .emergence import measured_reason
from .verdicts import BY_CONSTRUCTION, UNTESTABLE, VERDICTS

PAPER_SIDE = {True: "holds", False: "fails", None: "not printed"}

# The bar a preset's claims are held to: this share of the claims that hold on the
# paper's own numbers (by-construction ones excluded) must hold on ours. A fraction, so that the
# claims it asks for are counted exactly.
BAR_SHARE = Fraction(4, 5)


def paper_counts(records: list[dict]) -> dict[str, int]:
    counts = {v: 0 for v in PAPER_SIDE.values()}
    for r in records:
        counts[PAPER_SIDE[r["on_paper"]]] += 1
    return counts


def median_effect_fraction(records: list[dict]) -> float | None:
    """The median of the claims' effect fractions (ours over the paper's log-ratio), by-construction
    claims left out; None when no claim has one."""
    found = [r["effect_fraction"] for r in records
             if r.get("effect_fraction") is not None and r["verdict"] != BY_CONSTRUCTION]
    return median(found) if found else None


def fraction_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def untestable_why(record: dict) -> str:
    """Why a claim is untestable on ours, short: a cell, its own mark, or the scale study's quoted point."""
    quoted = (record.get("scale") or {}).get("quoted")
    if quoted:
        return (f"at this scale: the study shows it at `{quoted['key']}` ({quoted['shape']}, {quoted['tokens']:,} tokens, "
                f"ratio {quoted['ratio']:.3f} at {quoted['multiple']:g} L_tr)")
    marker = "not testable on ours: "
    for part in record["evidence"].split("; "):
        if part.startswith(marker):
            return part[len(marker):]
    return "no check on ours"


def sweep_text(sweep: dict) -> str:
    """'a budget sweep would measure why (2,016,000,000 training tokens): <why>'."""
    tokens = sweep.get("tokens") or {}
    sized = ", ".join(f"{v} {tokens[v]:,}" for v in sweep["variables"] if v in tokens)
    cost = f" ({sized} training tokens, lenex.claims.power.sweep_tokens)" if sized else ""
    return f"a {' and '.join(sweep['variables'])} sweep would measure why{cost}: {sweep['why']}"


def paper_too(record: dict) -> bool:
    """Whether every comparison that contradicts the claim on ours reads only cells where the paper's own
    numbers fail it too (`paper_fails_on`): ours then agrees with the paper's numbers, not with its words."""
    failing = set(record.get("paper_fails_on") or ())
    against = [p for p in record.get("parts") or [] if p["verdict"] == "contradicted" and not p.get("cannot_fail")]
    return bool(failing and against) and all(set(p["refs"]) <= failing for p in against)


def reason_of(record: dict) -> str:
    """The measured reason a claim does not hold, as a group name for the summary's table."""
    verdict, scale = record["verdict"], record.get("scale") or {}
    if record.get("negligible"):
        return "effect negligible (inside the smallest effect of interest)"
    if verdict == UNTESTABLE:
        if scale.get("quoted"):
            return "untestable at this scale (the scale study shows it only beyond the run's budget or shape)"
        why = untestable_why(record)
        return ("untestable: not recorded in this run" if "not recorded in this run" in why
                else "untestable: the failure it fixes is absent on ours" if "failure it fixes" in why
                else "untestable: no cell or replicate can decide it")
    if verdict == "contradicted":
        if paper_too(record):
            return "contradicted only on cells where the paper's own numbers fail too (paper_fails)"
        if scale.get("never_seen_budgets"):
            return "contradicted at every budget the scale study tried"
        if scale.get("first_seen_tokens") is not None:
            return "contradicted within the scale at which the study shows its phenomenon"
        measured = measured_reason(record.get("emergence") or [])
        if measured:
            return measured
        if record.get("designed_sweeps"):
            return "contradicted, not yet measured: a sweep designed for it is planned (config/sweeps.yaml)"
        if record.get("sweep"):
            return f"contradicted, not yet measured: a {' and '.join(record['sweep']['variables'])} sweep would"
        return "contradicted, no sweep named"
    power = record.get("power")
    if power is None:
        if record.get("read_as_exact"):
            return "inconclusive: one replicate (a measurement of one model has no interval)"
        return "inconclusive: no paired replicate decides it"
    if power["leaning"]["significantly_against"]:
        return "inconclusive, with comparisons significantly against the claim at their own level"
    return "inconclusive: more seeds or scored tokens would decide it"


def against_bar(records: list[dict], share: Fraction = BAR_SHARE) -> dict[str, int]:
    """Of the claims that hold on the paper's numbers (`on_paper`), by-construction ones excluded:
    how many hold on ours (with significance: the verdict `holds`), the bar (the smallest whole
    number of them that is at least `share`), how many are contradicted, inconclusive and
    untestable, how many contradicted ones the scale study never shows at any budget it ran, and the
    most that could hold at this scale (all but the untestable)."""
    if not 0 < share <= 1:
        raise ValueError(f"the bar's share must be in (0, 1], got {share}")
    counted = [r for r in records if r["on_paper"] is True and r["verdict"] != BY_CONSTRUCTION]
    count = lambda verdict: sum(r["verdict"] == verdict for r in counted)  # noqa: E731
    never = [r for r in counted if (r.get("scale") or {}).get("never_seen_budgets")]
    return {"on_paper": len(counted), "hold": count("holds"), "bar": math.ceil(Fraction(share) * len(counted)),
            "contradicted": count("contradicted"), "inconclusive": count("inconclusive"),
            "untestable": count(UNTESTABLE), "never_seen": len(never),
            "reachable": len(counted) - count(UNTESTABLE)}


def meets(bar: dict) -> str:
    if bar["hold"] >= bar["bar"]:
        return "yes"
    return "no" if bar["reachable"] >= bar["bar"] else "no (out of reach at this scale)"


def non_holding_table(documents: list[dict]) -> list[str]:
    """Every claim that does not hold on ours (by-construction ones left out), grouped by its measured
    reason (reason_of), with the paper it belongs to."""
    groups: dict[str, list[str]] = {}
    for document in documents:
        for r in document["claims"]:
            if r["verdict"] not in ("holds", BY_CONSTRUCTION):
                groups.setdefault(reason_of(r), []).append(f"{r['id']} ({document['paper']})")
    if not groups:
        return []
    lines = ["", "Claims that do not hold on ours, grouped by measured reason (each claim's page line gives the "
             "power, the sweep and its cost):", "", "| reason | claims | count |", "|---|---|---|"]
    for reason in sorted(groups):
        lines.append(f"| {reason} | {', '.join(groups[reason])} | {len(groups[reason])} |")
    return lines


def frozen_table(documents: list[dict]) -> list[str]:
    """Per paper with a reference run: the five counts under the claims as they stood before its data
    and under today's, and every claim whose verdict moved (lenex.claims.frozen)."""
    frozen = [d for d in documents if d.get("frozen")]
    if not frozen:
        return []
    lines = ["", "Frozen rules beside today's: each reference run's claims file and default thresholds as they stood at "
             "the revision of its first raw results, evaluated on the same cells by today's engine (docs/claims.md); "
             "no rule change hides a verdict.", "",
             "| paper | rules | " + " | ".join(VERDICTS) + " | verdicts moved |", "|---|---|" + "---|" * (len(VERDICTS) + 1)]
    for document in frozen:
        f = document["frozen"]
        before, now = verdict_counts(f["records"]), verdict_counts(document["claims"])
        lines.append(f"| {document['paper']} | frozen at {f['revision']} | " + " | ".join(str(before[v]) for v in VERDICTS)
                     + f" | {len(f['moved'])} |")
        lines.append(f"| {document['paper']} | today's | " + " | ".join(str(now[v]) for v in VERDICTS) + " | |")
    moved = [(d["paper"], m) for d in frozen for m in d["frozen"]["moved"]]
    if moved:
        lines += ["", "Verdicts the rule changes moved (each paper's page lists the commits):", ""]
        lines += [f"- {m['id']} ({paper}): {m['frozen'] or 'absent'} → {m['current'] or 'absent'}; {m['reason']}"
                  f" ({', '.join(c['commit'] for c in m['commits']) or 'no commit listed'})" for paper, m in moved]
    return lines


def render_summary(preset: str, documents: list[dict], paths: list[Path], out: Path) -> str:
    """results/<preset>/claims.md: per paper the five counts, the median effect fraction, the
    paper's side, the bar, and the untestable claims with why."""
    lines = [f"# Claims at preset `{preset}`", "",
             "Which of each paper's claims hold on our numbers, as evidence: each verdict comes from an interval "
             "at a stated level (docs/claims.md); a margin inside its interval is inconclusive. The paper's side "
             f"checks the claims files on its printed numbers. Built by `snakemake results/{preset}/claims.md`.", "",
             "| paper | claims | holds | contradicted | inconclusive | untestable | by construction | "
             "median effect fraction | paper: holds | paper: fails | paper: not printed |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for document, path in zip(documents, paths):
        ours, paper = verdict_counts(document["claims"]), paper_counts(document["claims"])
        link = Path(os.path.relpath(path.with_suffix(".md"), out.parent)).as_posix()
        lines.append(f"| [{document['paper']}]({link}) | {len(document['claims'])} | "
                     + " | ".join(str(ours[v]) for v in VERDICTS)
                     + f" | {fraction_text(median_effect_fraction(document['claims']))} | "
                     + " | ".join(str(paper[v]) for v in PAPER_SIDE.values()) + " |")
    lines += ["", f"Against the bar: at least {float(BAR_SHARE):.0%} of the claims that hold on the paper's own numbers "
              "(by-construction ones excluded) must hold on ours; an inconclusive or untestable claim does not hold "
              "(`never seen`: contradicted where the scale study shows its phenomenon at no budget it ran; "
              "`most reachable`: all but the untestable).", "",
              "| paper | hold on the paper | of them, hold on ours | bar | contradicted | inconclusive | untestable | "
              "never seen | most reachable | meets the bar |", "|---|---|---|---|---|---|---|---|---|---|"]
    for document in documents:
        bar = against_bar(document["claims"])
        lines.append(f"| {document['paper']} | {bar['on_paper']} | {bar['hold']} | {bar['bar']} | {bar['contradicted']} | "
                     f"{bar['inconclusive']} | {bar['untestable']} | {bar['never_seen']} | {bar['reachable']} | "
                     f"{meets(bar)} |")
    lines += frozen_table(documents)
    lines += earlier_table(documents)
    lines += non_holding_table(documents)
    for document in documents:
        records = document["claims"]
        contradicted = [r["id"] for r in records if r["verdict"] == "contradicted"]
        if contradicted:
            lines += ["", f"Contradicted on ours in `{document['paper']}`: {', '.join(contradicted)}."]
        untestable = [f"{r['id']} ({untestable_why(r)})" for r in records if r["verdict"] == UNTESTABLE]
        if untestable:
            lines += ["", f"Untestable on ours in `{document['paper']}`: {'; '.join(untestable)}."]
    return "\n".join(lines) + "\n"
