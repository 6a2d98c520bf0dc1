"""Which test tokens an evaluation scores: spans drawn across the whole split.

Taking the test documents in id order until the token budget is spent scores whatever documents
sort first (at `workstation` the PG22 stand-in's first three books, most of it one of them). A
table's perplexity should describe its split, so the spans are spread over every document long
enough to hold one, by a rule that depends on nothing but the split, the span and a seed: every
model scored on the same split, span and budget reads the same tokens, so cells stay paired.

The rule (docs/raw-results.md repeats it):
1. Eligible documents: those with at least one whole span of `span` tokens.
2. Spans are dealt one per eligible document per round, in an order shuffled once by `seed`,
   until the budget (`max_tokens` // span spans) is spent; a document with no room for another
   span is passed over. With fewer spans than eligible documents, the first documents of the
   shuffled order get one span each.
3. A document's spans sit in its whole-span slots (offsets 0, span, 2 span, ...), chosen by the
   document's own generator (seeded by seed, span and its index) without repeats, in order.

`first_documents` keeps the rule lenex scored by before: whole spans from each document in id
order until the budget is spent. A design fixed with it (the emergence sweeps, whose committed
points were scored so) names it, so every point of one sweep reads the same tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScoredSample:
    """The scored tokens and where they came from."""

    tokens: np.ndarray  # int64, (spans x span) tokens in (document, offset) order
    spans: list[tuple[int, int]]  # (document index in the split, token offset) of each span
    documents: int  # documents of the split
    eligible: int  # documents holding at least one span
    split_tokens: int  # tokens of the split
    rule: str  # one of RULES

    @property
    def documents_scored(self) -> int:
        return len({doc for doc, _ in self.spans})

    def summary(self) -> dict:
        """What a record and a table header say about the scored tokens."""
        return {"rule": self.rule, "spans": len(self.spans), "span": int(self.tokens.size // max(len(self.spans), 1)),
                "documents": self.documents, "eligible": self.eligible, "documents_scored": self.documents_scored,
                "token_share": round(self.tokens.size / self.split_tokens, 6) if self.split_tokens else 0.0,
                "document_ids": sorted({doc for doc, _ in self.spans})}


def span_allocation(slots: list[int], spans: int, seed: int) -> list[int]:
    """Spans per document: dealt one per document per round in an order shuffled by `seed`,
    each document taking at most its `slots` (whole spans it holds), until `spans` are dealt or
    every slot is taken."""
    if spans < 1:
        raise ValueError(f"at least one span must be scored, got {spans}")
    order = [i for i in np.random.default_rng(seed).permutation(len(slots)).tolist() if slots[i] > 0]
    taken = [0] * len(slots)
    left = spans
    while left and order:
        for i in list(order):
            if not left:
                break
            taken[i] += 1
            left -= 1
            if taken[i] == slots[i]:
                order.remove(i)
    return taken


RULES = ("across-documents", "first-documents")


def first_documents(documents, span: int, max_tokens: int) -> ScoredSample:
    """Whole spans from each document in id order until `max_tokens` // span spans are taken."""
    documents, spans = _checked(documents, span, max_tokens)
    chosen, parts = [], []
    for doc, tokens in enumerate(documents):
        for slot in range(min(len(tokens) // span, spans - len(chosen))):
            chosen.append((doc, slot * span))
            parts.append(tokens[slot * span:(slot + 1) * span].astype(np.int64))
        if len(chosen) == spans:
            break
    return ScoredSample(np.concatenate(parts), chosen, len(documents), sum(1 for d in documents if len(d) >= span),
                        int(sum(len(d) for d in documents)), "first-documents")


def _checked(documents, span: int, max_tokens: int) -> tuple[list[np.ndarray], int]:
    if span < 2:
        raise ValueError(f"the scored span must be at least 2 tokens, got {span}")
    spans = max_tokens // span
    if spans == 0:
        raise ValueError(f"max_tokens {max_tokens} is smaller than one span of {span} tokens")
    documents = [np.asarray(d) for d in documents]
    if not any(len(d) >= span for d in documents):
        raise ValueError(f"no test document has {span} tokens: the protocol cannot use this span")
    return documents, spans


def sample_spans(documents, span: int, max_tokens: int, seed: int) -> ScoredSample:
    """The scored sample of `documents` (token arrays of one split): `max_tokens` // span spans of
    `span` tokens spread over the split as the module's rule says."""
    documents, spans = _checked(documents, span, max_tokens)
    slots = [len(d) // span for d in documents]
    taken = span_allocation(slots, spans, seed)
    chosen, parts = [], []
    for doc, (count, have) in enumerate(zip(taken, slots)):
        if count == 0:
            continue
        # Each document's own stream: the offsets in one document do not depend on the others.
        rng = np.random.default_rng([seed, span, doc])
        for slot in sorted(rng.choice(have, size=count, replace=False).tolist()):
            chosen.append((doc, slot * span))
            parts.append(documents[doc][slot * span:(slot + 1) * span].astype(np.int64))
    return ScoredSample(np.concatenate(parts), chosen, len(documents), sum(1 for s in slots if s),
                        int(sum(len(d) for d in documents)), "across-documents")
