"""The claims as they stood before a run's data, evaluated beside today's.

A rule changed after the data it judges may be right, but the verdict it replaced must stay in view.
For every paper with a reference run at a preset, `snapshot` (a developer's command: it reads git)
writes, beside the run's record, the claims file as it stood at the revision of the run's first raw
results, the default thresholds of that revision, and the history of every later commit that changed
one of its claims or a default:

    python -m lenex.claims.frozen snapshot --preset workstation
      -> results/workstation/runs/<paper>/frozen-claims.yaml   (the claims file at that revision, verbatim)
         results/workstation/runs/<paper>/frozen-rules.json    (revision, defaults, history)

The claims rule reads both when they exist (no git needed there): it evaluates the frozen claims with
the same cells and today's engine, their default thresholds pinned as they were (`pinned`), and
records beside today's verdicts the frozen ones and every claim whose verdict moved, with the
commits that changed its rules and the fields they changed (`moved`). docs/claims.md says what the
frozen side does and does not freeze.
"""
from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import lzma
import operator
import subprocess
from pathlib import Path

import yaml

from ..cli import run_cli
from ..files import atomic_write_text, read_json
from ..tables.formatting import md_escape

CLAIMS_FILE = "config/claims/{paper}.yaml"
DEFAULTS_FILE = "src/lenex/claims/predicates.py"
FROZEN_CLAIMS = "results/{preset}/runs/{paper}/frozen-claims.yaml"
FROZEN_RULES = "results/{preset}/runs/{paper}/frozen-rules.json"
# The fields of a claim that decide its verdict; a change to any other (a statement's wording, a
# source) moves nothing and is not listed as a reason.
RULE_FIELDS = ("check", "thresholds", "given", "smallest_effect", "narrowed", "by_construction", "untestable",
               "scale", "sweep")


def frozen_paths(preset: str, paper: str) -> tuple[str, str]:
    return FROZEN_CLAIMS.format(preset=preset, paper=paper), FROZEN_RULES.format(preset=preset, paper=paper)


def claim_digest(claim: dict) -> str:
    """A claim's rules, as a short digest: equal digests, equal verdicts under one engine."""
    rules = {k: claim.get(k) for k in ("id", *RULE_FIELDS)}
    return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def default_thresholds(source: str) -> dict[str, float]:
    """The THRESHOLDS mapping of a revision's predicates module, read without running it: only
    numbers, module-level numeric names and + - * / are allowed (anything else is an error)."""
    names: dict[str, float] = {}

    def value(node) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        raise ValueError(f"line {getattr(node, 'lineno', '?')}: not a plain number: {ast.unparse(node)}")

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "THRESHOLDS":
                if not isinstance(node.value, ast.Dict):
                    raise ValueError("THRESHOLDS is not a literal mapping")
                return {ast.literal_eval(k): value(v) for k, v in zip(node.value.keys, node.value.values)}
            try:
                names[name] = value(node.value)
            except ValueError:
                pass  # not a number: no threshold can name it
    raise ValueError("no THRESHOLDS mapping in the source")


def words_used(claim: dict) -> list[str]:
    """The threshold words a claim's verdict reads: its check's and its scale lookup's."""
    from .evaluate import words_named  # the engine (and scipy) only where a claim is read, not at DAG build
    used = words_named(claim.get("check")) + ([claim["scale"]["threshold"]] if claim.get("scale") else [])
    return list(dict.fromkeys(used))


def pinned(claims: dict, defaults: dict[str, float], revision: str) -> dict:
    """The claims with every default threshold they read pinned to `defaults` (a claim's own override
    stays): today's defaults, or a rule that derives thresholds, then cannot change the frozen side."""
    out = copy.deepcopy(claims)
    for claim in out["claims"]:
        own = claim.get("thresholds") or {}
        for word in words_used(claim):
            if word not in own:
                if word not in defaults:
                    raise ValueError(f"claim {claim['id']!r}: threshold {word!r} has no default at {revision}")
                own[word] = {"value": defaults[word], "why": f"the default at {revision}"}
        if own:
            claim["thresholds"] = own
    return out


def changed_fields(frozen: dict | None, current: dict | None) -> list[str]:
    if frozen is None or current is None:
        return []
    return [k for k in RULE_FIELDS if frozen.get(k) != current.get(k)]


def commits_changing(claim_id: str, frozen_digest: str | None, history: list[dict]) -> list[dict]:
    """The history's commits after which the claim's digest differs from the one before them."""
    found, before = [], frozen_digest
    for entry in history:
        now = entry["claims"].get(claim_id)
        if now != before:
            found.append({k: entry[k] for k in ("commit", "date", "subject")})
        before = now
    return found


def defaults_changing(words: list[str], defaults: dict[str, float], history: list[dict]) -> list[dict]:
    """The commits that changed a default threshold among `words` (those a claim does not override)."""
    found, before = [], defaults
    for entry in history:
        if any(entry["defaults"].get(w) != before.get(w) for w in words):
            found.append({k: entry[k] for k in ("commit", "date", "subject")})
        before = entry["defaults"]
    return found


def moved(frozen_claims: dict, current_claims: dict, frozen_records: list[dict], current_records: list[dict],
          rules: dict) -> list[dict]:
    """Every claim whose verdict differs between the frozen rules and today's, or that only one side
    has, with what changed and the commits that changed it."""
    frozen_by = {c["id"]: c for c in frozen_claims["claims"]}
    current_by = {c["id"]: c for c in current_claims["claims"]}
    verdict_frozen = {r["id"]: r["verdict"] for r in frozen_records}
    verdict_now = {r["id"]: r["verdict"] for r in current_records}
    history, last = rules["history"], (rules["history"][-1]["claims"] if rules["history"] else {})
    out = []
    for claim_id in list(dict.fromkeys([*verdict_frozen, *verdict_now])):
        before, now = verdict_frozen.get(claim_id), verdict_now.get(claim_id)
        if before == now:
            continue
        frozen, current = frozen_by.get(claim_id), current_by.get(claim_id)
        fields = changed_fields(frozen, current)
        commits = commits_changing(claim_id, claim_digest(frozen) if frozen else None, history)
        own = set((current or {}).get("thresholds") or {})
        defaults = defaults_changing([w for w in words_used(current or {}) if w not in own], rules["defaults"],
                                     history)
        if frozen is None:
            reason = "added after the data"
        elif current is None:
            reason = "removed after the data"
        elif fields:
            reason = "its rules changed: " + ", ".join(fields)
        elif defaults:
            reason = "a default threshold it reads changed"
        else:
            reason = ("today's engine decides it differently with today's thresholds: its text and the defaults "
                      "are unchanged (a rule of lenex.claims, docs/claims.md)")
        entry = {"id": claim_id, "frozen": before, "current": now, "reason": reason, "fields": fields,
                 "commits": commits + [c for c in defaults if c not in commits]}
        if current is not None and last.get(claim_id) != claim_digest(current):
            entry["after_snapshot"] = True  # changed since the snapshot was written: its commit is not listed
        out.append(entry)
    return out


def short(subject: str, width: int = 100) -> str:
    return subject if len(subject) <= width else subject[:width].rsplit(" ", 1)[0] + " …"


def frozen_section(document: dict) -> list[str]:
    """The claims page's part on the frozen rules: counts on both sides and the moved verdicts."""
    frozen = document.get("frozen")
    if not frozen:
        return []
    from .counts import counts_table
    lines = ["", f"## The rules as they stood before the data ({frozen['revision']}, {frozen['date'][:10]})", "",
             f"This run's first raw results were made at `{frozen['revision']}`. Its claims file and default "
             "thresholds as they stood there, evaluated on the same cells by today's engine (docs/claims.md, "
             "\"Frozen rules beside revised ones\"):", "",
             *counts_table("rules", [(f"frozen at {frozen['revision']}", frozen["records"]),
                                     ("today's", document["claims"])])]
    if not frozen["moved"]:
        return lines + ["", "No verdict moved."]
    lines += ["", "| claim | frozen | today | why it moved | commits |", "|---|---|---|---|---|"]
    for m in frozen["moved"]:
        commits = "; ".join(f"{c['commit']} {short(c['subject'])}" for c in m["commits"]) or "—"
        if m.get("after_snapshot"):
            commits += " (and a change after the snapshot, not yet listed)"
        lines.append(f"| {m['id']} | {m['frozen'] or '—'} | {m['current'] or '—'} | {md_escape(m['reason'])} | "
                     f"{md_escape(commits)} |")
    return lines


# --- snapshot: the only part that reads git ---------------------------------------------------

def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def raw_revisions(raw_dir: Path, paper: str) -> dict[str, str]:
    """Part -> the revision its raw results were made at (one per part; more is an error)."""
    found = {}
    for path in sorted(raw_dir.glob(f"{paper}.part-*.jsonl.xz")):
        revs = {json.loads(line).get("git_rev") for line in lzma.open(path, "rt", encoding="utf-8") if line.strip()}
        revs.discard(None)
        if len(revs) != 1:
            raise ValueError(f"{path}: {len(revs)} revisions recorded ({', '.join(sorted(revs))}), expected one")
        found[path.name.split(".part-")[1].removesuffix(".jsonl.xz")] = revs.pop()
    if not found:
        raise ValueError(f"no raw results of {paper} under {raw_dir}")
    return found


def snapshot(repo: Path, preset: str, paper: str) -> tuple[Path, Path]:
    parts = raw_revisions(repo / "results" / preset / "raw", paper)
    dated = sorted((int(_git("log", "-1", "--format=%ct", rev, cwd=repo)), rev) for rev in set(parts.values()))
    revision = dated[0][1]
    claims_file = CLAIMS_FILE.format(paper=paper)
    text = _git("show", f"{revision}:{claims_file}", cwd=repo)
    history = []
    log = _git("log", "--reverse", "--format=%h%x09%cI%x09%s", f"{revision}..HEAD", "--", claims_file, DEFAULTS_FILE,
               cwd=repo)
    for line in filter(None, log.splitlines()):
        commit, date, subject = line.split("\t", 2)
        claims = yaml.safe_load(_git("show", f"{commit}:{claims_file}", cwd=repo))
        history.append({"commit": commit, "date": date, "subject": subject,
                        "claims": {c["id"]: claim_digest(c) for c in claims["claims"]},
                        "defaults": default_thresholds(_git("show", f"{commit}:{DEFAULTS_FILE}", cwd=repo))})
    rules = {"paper": paper, "preset": preset, "revision": revision,
             "date": _git("log", "-1", "--format=%cI", revision, cwd=repo).strip(),
             "raw_revisions": parts, "claims_file": claims_file,
             "claims_blob": _git("rev-parse", f"{revision}:{claims_file}", cwd=repo).strip(),
             "defaults": default_thresholds(_git("show", f"{revision}:{DEFAULTS_FILE}", cwd=repo)),
             "written_at": _git("rev-parse", "--short", "HEAD", cwd=repo).strip(), "history": history}
    claims_path, rules_path = (repo / p for p in frozen_paths(preset, paper))
    claims_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(claims_path, text)
    atomic_write_text(rules_path, json.dumps(rules, indent=0, ensure_ascii=False) + "\n")
    return claims_path, rules_path


def papers_run(repo: Path, preset: str) -> list[str]:
    """The papers with raw results at a preset (their reference runs)."""
    return sorted({p.name.split(".part-")[0] for p in (repo / "results" / preset / "raw").glob("*.part-*.jsonl.xz")})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="write the frozen claims and rules of a preset's reference runs (reads git)")
    snap.add_argument("--preset", required=True)
    snap.add_argument("--paper", action="append", help="default: every paper with raw results at the preset")
    snap.add_argument("--repo", default=".")
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    for paper in args.paper or papers_run(repo, args.preset):
        for path in snapshot(repo, args.preset, paper):
            print(path.relative_to(repo))


def load_rules(path: str | Path) -> dict:
    rules = read_json(path)
    missing = [k for k in ("revision", "date", "defaults", "history") if k not in rules]
    if missing:
        raise ValueError(f"{path}: not a frozen-rules record (missing {', '.join(missing)})")
    return rules


if __name__ == "__main__":
    run_cli(main)
