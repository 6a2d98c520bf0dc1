"""The emergence sweeps designed for the claims: `config/sweeps.yaml` names which claims
each sweep measures, and `results/scale-study/sweeps/plan.json`, written from the cost model before
any point ran, what it costs and its recorded parts; a part's record
(`results/scale-study/sweeps/<sweep>/parts/<part>.json`) exists once the part has run. A claim's page
line names its sweeps, their planned CPU hours and how many of their parts have run, so a reader of
a contradicted claim not yet measured sees which sweep will measure it and what that costs.
Read as files, like the emergence records (lenex.claims.emergence).
"""
from __future__ import annotations

from pathlib import Path

DESIGN = "config/sweeps.yaml"
PLAN = "results/scale-study/sweeps/plan.json"
PART_RECORDS = "results/scale-study/sweeps/*/parts/*.json"


def part_files(root: str | Path = ".") -> list[str]:
    """The sweep parts recorded under `root`, sorted."""
    root = Path(root)
    return sorted(str(p.relative_to(root)) for p in root.glob(PART_RECORDS))


def measured_values(sweep: dict) -> list:
    """Every value a designed sweep measures: its first round's and each extension's, in order."""
    return list(sweep["variable"]["values"]) + [v for e in sweep.get("extensions", []) for v in e["values"]]


def designed_by_claim(design: dict, plan: dict, parts: list[str]) -> dict[str, list[dict]]:
    """claim id -> the sweeps designed to measure it: {sweep, variable, values, cpu_hours, parts,
    parts_run}. A sweep of the design missing from the plan is an error naming it (the plan is
    written from the design: `python -m lenex.scale_study.sweeps plan`)."""
    found: dict[str, list[dict]] = {}
    for name, sweep in design["sweeps"].items():
        if name not in plan["sweeps"]:
            raise ValueError(f"sweep {name!r} of {DESIGN} is not in {PLAN}: write the plan again from the design")
        planned = plan["sweeps"][name]
        done = {Path(p).stem for p in parts if Path(p).parent.parent.name == name}
        entry = {"sweep": name, "variable": sweep["variable"]["name"], "values": measured_values(sweep),
                 "cpu_hours": planned["cpu_seconds"] / 3600, "parts": sorted(planned["parts"]),
                 "parts_run": sorted(done & set(planned["parts"]))}
        for claim in dict.fromkeys(effect["claim"] for effect in sweep["effects"]):
            found.setdefault(claim, []).append(entry)
    return found


def designed_text(entries: list[dict]) -> str:
    """'designed sweep lex-budget (train_tokens 2,097,152 to 16,777,216, 11.2 CPU hours planned in
    4 parts, 0 run)'; several joined by '; '."""
    def one(e: dict) -> str:
        values = e["values"]
        span = (f"{values[0]:,} to {values[-1]:,}" if all(isinstance(v, int) for v in values)
                else ", ".join(str(v) for v in values))
        return (f"designed sweep {e['sweep']} ({e['variable']} {span}, {e['cpu_hours']:.1f} CPU hours planned in "
                f"{len(e['parts'])} part{'s' if len(e['parts']) != 1 else ''}, {len(e['parts_run'])} run)")
    return "; ".join(one(e) for e in entries)


def awaiting(entries: list[dict]) -> list[str]:
    """The designed sweeps with parts not yet run."""
    return [e["sweep"] for e in entries if len(e["parts_run"]) < len(e["parts"])]
