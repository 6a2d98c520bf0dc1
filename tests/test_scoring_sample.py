"""The scored sample: spans spread over every long enough test document, the same for every model."""
import numpy as np
import pytest

from lenex.scoring.sample import sample_spans, span_allocation


def test_allocation_deals_one_span_per_document_per_round():
    # 3 documents with room for 5, 1 and 2 spans; 6 spans: round 1 gives each one, round 2 the
    # two with room left, round 3 only the first: (3, 1, 2), whatever the shuffled order.
    for seed in range(5):
        assert span_allocation([5, 1, 2], 6, seed) == [3, 1, 2]
    assert span_allocation([5, 0, 2], 100, 0) == [5, 0, 2]  # every slot taken, no more to give
    # Fewer spans than documents: one each to the first of the seeded order.
    few = span_allocation([4, 4, 4, 4], 2, 3)
    assert sorted(few) == [0, 0, 1, 1]
    assert span_allocation([4, 4, 4, 4], 2, 3) == few
    with pytest.raises(ValueError, match="at least one span"):
        span_allocation([1], 0, 0)


def test_every_long_enough_document_contributes_and_short_ones_never():
    # 58 long documents and the rest too short, as the PG22 stand-in's test split: a budget of
    # 64 spans reaches every long document, none of the short ones.
    docs = [np.arange(1000 + i) + 10_000 * i for i in range(58)] + [np.arange(50)] * 7
    sample = sample_spans(docs, span=256, max_tokens=64 * 256, seed=1234)
    scored = {doc for doc, _ in sample.spans}
    assert scored == set(range(58))
    assert sample.eligible == 58 and sample.documents == 65 and sample.tokens.size == 64 * 256
    for (doc, offset), piece in zip(sample.spans, sample.tokens.reshape(-1, 256)):
        assert offset % 256 == 0 and offset + 256 <= len(docs[doc])
        assert np.array_equal(piece, docs[doc][offset:offset + 256])  # the tokens are the document's own
    assert sample.summary()["documents_scored"] == 58
    assert sample.summary()["token_share"] == pytest.approx(64 * 256 / sum(len(d) for d in docs), abs=1e-6)


def test_the_same_tokens_for_every_model_and_another_seed_draws_others():
    docs = [np.arange(3000) + 100_000 * i for i in range(9)]
    a, b = sample_spans(docs, 128, 4096, seed=7), sample_spans(docs, 128, 4096, seed=7)
    assert a.spans == b.spans and np.array_equal(a.tokens, b.tokens)
    assert sample_spans(docs, 128, 4096, seed=8).spans != a.spans
    # No span twice; spans of one document in increasing order.
    assert len(set(a.spans)) == len(a.spans) and a.spans == sorted(a.spans)


def test_the_first_documents_no_longer_take_the_whole_budget():
    # One huge first document and many small ones: taking documents in id order would score the
    # first one alone; the sample gives it one span per round like every other.
    docs = [np.arange(100_000)] + [np.arange(600) + 1_000_000 * i for i in range(1, 20)]
    sample = sample_spans(docs, 256, 40 * 256, seed=0)
    first = sum(1 for doc, _ in sample.spans if doc == 0)
    assert sample.documents_scored == 20 and first == 40 - 2 * 19  # the others hold 2 spans each


def test_bad_spans_and_budgets_are_one_error():
    docs = [np.arange(100)]
    with pytest.raises(ValueError, match="at least 2 tokens"):
        sample_spans(docs, 1, 100, 0)
    with pytest.raises(ValueError, match="smaller than one span"):
        sample_spans(docs, 64, 10, 0)
    with pytest.raises(ValueError, match="no test document has 128 tokens"):
        sample_spans(docs, 128, 1024, 0)


def test_the_former_rule_takes_whole_spans_of_the_first_documents():
    from lenex.scoring.evaluate import scored_sample
    from lenex.scoring.sample import first_documents

    docs = [np.arange(10), np.arange(3), np.arange(100, 108), np.arange(200, 260)]
    old = first_documents(docs, span=4, max_tokens=20)
    # 5 spans: doc 0 gives 2, doc 1 none (too short), doc 2 gives 2, doc 3 the last one.
    assert old.tokens.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103, 104, 105, 106, 107, 200, 201, 202, 203]
    assert old.spans == [(0, 0), (0, 4), (2, 0), (2, 4), (3, 0)] and old.summary()["rule"] == "first-documents"
    assert scored_sample(docs, 4, 20, "first-documents").spans == old.spans
    assert scored_sample(docs, 4, 20).summary()["rule"] == "across-documents"
    with pytest.raises(ValueError, match="scored_rule 'sorted' is not one of across-documents, first-documents"):
        scored_sample(docs, 4, 20, "sorted")


def test_a_table_header_names_what_its_cells_scored():
    from lenex.tables.header import scored_fact

    docs = [np.arange(600) + 1000 * i for i in range(5)] + [np.arange(10)]
    sample = sample_spans(docs, 256, 4 * 256, seed=1)
    new = {"protocol": "lex", "tokens": 1024, "corpus": "pg22", "scored": sample.summary()}
    old = {"protocol": "lex", "tokens": 32768, "corpus": "arxiv"}
    text = scored_fact([new, old, {**new, "seed": 2}])
    assert text == ("arxiv: 32768, the first test documents in id order (recorded before spans were drawn across "
                    "the split; docs/lex.md); pg22: 1024 in 4 spans drawn across 4 of the 5 test documents holding "
                    f"one (6 in the split; {1024 / 3010:.1%} of its tokens)")
    assert scored_fact([{"protocol": "last-token", "tokens": 77}]) == 77  # other protocols: the count alone
