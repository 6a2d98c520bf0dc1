"""Properties the claims files' content must have (issue 33, docs/claims-coverage.md): a claim's scale
lookup reads every column beyond L_tr its check reads (as far as the scale study can answer), every
threshold of an effect word follows the stated rule from the paper's own numbers, a flat check that can
only compare identical model outputs is marked by construction, and the coverage inventory names every
claim and no other."""
import re

import pytest
import yaml

from lenex.claims.evaluate import load_claims, references, threshold_basis, words_named
from test_workflow import REPO

PAPERS = ["lex", "receptive-field", "segmented"]
SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"
COVERAGE = REPO / "docs/claims-coverage.md"
CELL = re.compile(r"^t\d+/[^/@]+/([^/@]+)@([0-9.]+)$")
EFFECT_WORDS = ("explodes", "rescues", "collapses")  # words for an effect whose size differs by claim
PAPER_LAYERS, PAPER_TRAIN_LENGTH = 12, 512  # the receptive-field paper's R and L_tr


def _claims(paper):
    return load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]


def _leaves(check, negated=False):
    """(kind, args, negated) of every predicate of a check."""
    kind, args = next(iter(check.items()))
    if kind == "not":
        return _leaves(args, not negated)
    if kind in ("all", "any"):
        return [leaf for sub in args for leaf in _leaves(sub, negated)]
    return [(kind, args, negated)]


def _columns(refs):
    return {float(m.group(2)) for ref in refs if (m := CELL.match(ref))}


@pytest.mark.parametrize("paper", PAPERS)
def test_effect_thresholds_are_derived_from_the_papers_numbers_never_typed(paper):
    """Every effect word's threshold comes from the paper's numbers by the rule (lenex.claims.thresholds):
    a claim asserting the effect derives it from its own cells, a claim of absence borrows it from the
    effect it is set against (`from` / `cells`); no claims file types a value for an effect word."""
    for claim in _claims(paper):
        basis = threshold_basis(claim)
        for word in set(words_named(claim.get("check"))) & set(EFFECT_WORDS):
            assert basis[word].source in ("derived", "borrowed", "contrast"), (claim["id"], word, basis[word].source)
            assert "value" not in (claim.get("thresholds") or {}).get(word, {}), (claim["id"], word)


def _same_output_columns(kind, args):
    """A flat check over one window row whose every column is at least its TRF: the last token sees
    its whole receptive field at each, so the columns are one model output (lenex keeps w·R/L_tr)."""
    if kind != "flat" or len(args) != 1:
        return False
    window = re.search(r"/window-w=(\d+)", args[0])
    columns = _columns(references({"flat": args}))
    return bool(window) and min(columns) >= int(window.group(1)) * PAPER_LAYERS / PAPER_TRAIN_LENGTH


def test_a_flat_check_of_identical_outputs_is_marked_by_construction():
    marked = []
    for claim in _claims("receptive-field"):
        if claim.get("check") and all(_same_output_columns(k, a) for k, a, _ in _leaves(claim["check"])):
            assert claim.get("by_construction"), claim["id"]
            marked.append(claim["id"])
    assert "rf-window-covered-flat" in marked


def test_the_coverage_inventory_names_every_claim_and_no_other():
    named = set(re.findall(r"`((?:lex|rf|seg)-[a-z0-9-]+)`", COVERAGE.read_text(encoding="utf-8")))
    ids = {c["id"] for paper in PAPERS for c in _claims(paper)}
    assert ids - named == set(), "claims missing from docs/claims-coverage.md"
    assert named - ids == set(), "docs/claims-coverage.md names claims that do not exist"
