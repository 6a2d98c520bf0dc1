"""The claims as they stood before a run's data, beside today's (lenex.claims.frozen)."""
from __future__ import annotations

import hashlib
import json
import lzma
import subprocess
from pathlib import Path

import pytest
import yaml

from lenex.claims import frozen as F
from lenex.pipeline.targets import Targets

REPO = Path(__file__).resolve().parents[1]


def claim(cid, check=None, **fields):
    return {"id": cid, "statement": f"{cid} says so", "source": "Table 1",
            "check": check or {"ratio_at_least": ["t1/a/x@2", "t1/a/x@1", "explodes"]}, **fields}


def test_default_thresholds_reads_numbers_and_names_without_running_the_module():
    source = "FLAT = 0.02\nOTHER = 'text'\nTHRESHOLDS = {'explodes': 1.25, 'flat': FLAT, 'rises': 1 + FLAT, 'neg': -2 * 0.5}\n"
    assert F.default_thresholds(source) == {"explodes": 1.25, "flat": 0.02, "rises": 1.02, "neg": -1.0}


@pytest.mark.parametrize("source", ["THRESHOLDS = {'x': open('f')}\n", "THRESHOLDS = dict(x=1)\n", "X = 1\n"])
def test_default_thresholds_refuses_anything_but_plain_numbers(source):
    with pytest.raises(ValueError):
        F.default_thresholds(source)


def test_digest_follows_the_rules_not_the_wording():
    a = claim("c1")
    assert F.claim_digest(a) == F.claim_digest({**a, "statement": "reworded", "source": "Table 2"})
    assert F.claim_digest(a) != F.claim_digest({**a, "given": {"claims": ["c0"], "why": "a fix"}})


def test_pinned_fixes_every_default_a_claim_reads_and_keeps_its_own():
    claims = {"claims": [claim("c1"), claim("c2", thresholds={"explodes": {"value": 3.0, "why": "the paper says x3"}}),
                         claim("c3", {"flat": ["t1/a/x@1,2"]})]}
    out = F.pinned(claims, {"explodes": 1.25, "flat": 0.02}, "abc1234")
    assert out["claims"][0]["thresholds"] == {"explodes": {"value": 1.25, "why": "the default at abc1234"}}
    assert out["claims"][1]["thresholds"]["explodes"]["value"] == 3.0
    assert out["claims"][2]["thresholds"]["flat"]["value"] == 0.02
    assert "thresholds" not in claims["claims"][0]  # the input is not changed
    with pytest.raises(ValueError, match="no default at abc1234"):
        F.pinned(claims, {"flat": 0.02}, "abc1234")


def history_entry(commit, claims, defaults):
    return {"commit": commit, "date": "2026-11-30T00:00:00+00:00", "subject": f"subject {commit}",
            "claims": {c["id"]: F.claim_digest(c) for c in claims}, "defaults": defaults}


def test_moved_names_what_changed_and_the_commit_that_changed_it():
    old = {"claims": [claim("c1"), claim("c2"), claim("c3"), claim("c4")]}
    c2_now = {**claim("c2"), "given": {"claims": ["c1"], "why": "fixes c1"}}
    new = {"claims": [claim("c1"), c2_now, claim("c3"), claim("c5")]}
    defaults = {"explodes": 1.25}
    history = [history_entry("aaa1111", [claim("c1"), c2_now, claim("c3")], defaults),
               history_entry("bbb2222", new["claims"], {"explodes": 1.5})]
    rules = {"defaults": defaults, "history": history}
    before = [{"id": "c1", "verdict": "holds"}, {"id": "c2", "verdict": "contradicted"},
              {"id": "c3", "verdict": "holds"}, {"id": "c4", "verdict": "holds"}]
    now = [{"id": "c1", "verdict": "holds"}, {"id": "c2", "verdict": "untestable"},
           {"id": "c3", "verdict": "inconclusive"}, {"id": "c5", "verdict": "holds"}]
    got = {m["id"]: m for m in F.moved(old, new, before, now, rules)}
    assert set(got) == {"c2", "c3", "c4", "c5"}  # c1 did not move
    assert got["c2"]["fields"] == ["given"] and got["c2"]["reason"] == "its rules changed: given"
    assert [c["commit"] for c in got["c2"]["commits"]] == ["aaa1111", "bbb2222"]  # the claim, then the default
    assert got["c3"]["reason"] == "a default threshold it reads changed"
    assert [c["commit"] for c in got["c3"]["commits"]] == ["bbb2222"]
    assert got["c4"]["reason"] == "removed after the data" and got["c4"]["current"] is None
    assert got["c5"]["reason"] == "added after the data" and got["c5"]["frozen"] is None
    assert not any(m.get("after_snapshot") for m in got.values())


def test_a_claim_changed_after_the_snapshot_is_flagged():
    old = {"claims": [claim("c1")]}
    new = {"claims": [claim("c1", {"less": ["t1/a/x@1", "t1/a/x@2"]})]}
    rules = {"defaults": {"explodes": 1.25}, "history": []}
    got = F.moved(old, new, [{"id": "c1", "verdict": "holds"}], [{"id": "c1", "verdict": "contradicted"}], rules)
    assert got[0]["after_snapshot"] and got[0]["commits"] == [] and got[0]["fields"] == ["check"]


def test_the_page_section_counts_both_sides():
    document = {"claims": [{"id": "c1", "verdict": "holds"}, {"id": "c2", "verdict": "untestable"}],
                "frozen": {"revision": "abc1234", "date": "2026-11-27T00:00:00+00:00",
                           "records": [{"id": "c1", "verdict": "holds"}, {"id": "c2", "verdict": "contradicted"}],
                           "moved": [{"id": "c2", "frozen": "contradicted", "current": "untestable",
                                      "reason": "its rules changed: given", "fields": ["given"],
                                      "commits": [{"commit": "bbb2222", "date": "", "subject": "a | b"}]}]}}
    text = "\n".join(F.frozen_section(document))
    assert "| frozen at abc1234 | 2 | 1 | 1 | 0 | 0 | 0 |" in text
    assert "| today's | 2 | 1 | 0 | 0 | 1 | 0 |" in text
    assert "bbb2222 a \\| b" in text
    assert F.frozen_section({"claims": []}) == []


def write_raw(path: Path, revs: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(path, "wt", encoding="utf-8") as out:
        for rev in revs:
            out.write(json.dumps({"file": "x", "git_rev": rev}) + "\n")


def test_raw_revisions_one_per_part(tmp_path):
    write_raw(tmp_path / "p.part-run.jsonl.xz", ["aaa", "aaa"])
    write_raw(tmp_path / "p.part-power.jsonl.xz", ["bbb"])
    assert F.raw_revisions(tmp_path, "p") == {"power": "bbb", "run": "aaa"}
    write_raw(tmp_path / "p.part-mixed.jsonl.xz", ["aaa", "ccc"])
    with pytest.raises(ValueError, match="2 revisions"):
        F.raw_revisions(tmp_path, "p")
    with pytest.raises(ValueError, match="no raw results of q"):
        F.raw_revisions(tmp_path, "q")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_snapshot_freezes_the_first_runs_revision_and_lists_later_changes(tmp_path):
    repo = tmp_path / "repo"
    (repo / "config" / "claims").mkdir(parents=True)
    (repo / "src" / "lenex" / "claims").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@t")
    git(repo, "config", "user.name", "t")
    claims_file, defaults_file = repo / "config/claims/p.yaml", repo / "src/lenex/claims/predicates.py"
    first = {"paper": "p", "claims": [claim("c1"), claim("c2")]}
    claims_file.write_text(yaml.safe_dump(first))
    defaults_file.write_text("THRESHOLDS = {'explodes': 1.25}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first rules")
    run_rev = git(repo, "rev-parse", "--short", "HEAD")
    write_raw(repo / "results/pre/raw/p.part-run.jsonl.xz", [run_rev])
    second = {"paper": "p", "claims": [claim("c1"), {**claim("c2"), "given": {"claims": ["c1"], "why": "x"}}]}
    claims_file.write_text(yaml.safe_dump(second))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c2 needs c1")
    claims_path, rules_path = F.snapshot(repo, "pre", "p")
    assert yaml.safe_load(claims_path.read_text()) == first
    rules = json.loads(rules_path.read_text())
    assert rules["revision"] == run_rev and rules["raw_revisions"] == {"run": run_rev}
    assert rules["defaults"] == {"explodes": 1.25}
    assert [h["subject"] for h in rules["history"]] == ["c2 needs c1"]
    assert rules["history"][0]["claims"]["c2"] == F.claim_digest(second["claims"][1])


def blob_id(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.mark.parametrize("paper", F.papers_run(REPO, "workstation"))
def test_committed_snapshots_match_their_run_and_todays_claims(paper):
    """The frozen file is the claims file at the revision its record names (by git's own blob id), that
    revision is the earliest of the run's raw results, and the history reaches today's claims: a claim
    edited since the snapshot would otherwise move a verdict with no commit named."""
    claims_path, rules_path = (REPO / p for p in F.frozen_paths("workstation", paper))
    rules = F.load_rules(rules_path)
    assert blob_id(claims_path) == rules["claims_blob"]
    assert rules["raw_revisions"] == F.raw_revisions(REPO / "results/workstation/raw", paper)
    assert rules["revision"] in rules["raw_revisions"].values()
    today = yaml.safe_load((REPO / F.CLAIMS_FILE.format(paper=paper)).read_text())
    last = rules["history"][-1]["claims"] if rules["history"] else {
        c["id"]: F.claim_digest(c) for c in yaml.safe_load(claims_path.read_text())["claims"]}
    stale = [c["id"] for c in today["claims"] if last.get(c["id"]) != F.claim_digest(c)]
    assert not stale, (f"claims changed since the snapshot: {stale}; commit them, then run "
                       f"python -m lenex.claims.frozen snapshot --preset workstation")


def test_the_claims_rule_reads_both_frozen_files_or_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    targets = Targets(None, None, None)
    assert targets.frozen_claims("pre", "p") == []
    claims_path, rules_path = F.frozen_paths("pre", "p")
    Path(claims_path).parent.mkdir(parents=True)
    Path(claims_path).write_text("claims: []\n")
    with pytest.raises(ValueError, match="frozen-rules.json is missing"):
        targets.frozen_claims("pre", "p")
    Path(rules_path).write_text("{}")
    assert targets.frozen_claims("pre", "p") == [claims_path, rules_path]
