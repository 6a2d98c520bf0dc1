"""document_pieces: the segmented-sequences rule (one document per sequence, no packing,
non-overlapping pieces, remainder dropped), on hand-made token files."""
import numpy as np
import pytest
from corpus_fixture import make_corpus

from lenex.data.store import TokenSplit, load_split
from lenex.data.tokens import document_pieces

EOT = 99


def _split(docs):
    """A TokenSplit laid out as prepare writes it: EOT after every document."""
    flat, offsets = [], [0]
    for doc in docs:
        flat += list(doc) + [EOT]
        offsets.append(len(flat))
    return TokenSplit(tokens=np.array(flat, dtype=np.uint16),
                      doc_offsets=np.array(offsets, dtype=np.int64), meta={})


# lengths 7, 3, 8 (+ EOT each); values say which document a token came from
SPLIT = _split([range(7), range(10, 13), range(20, 28)])


def test_pieces_without_eot():
    got = document_pieces(SPLIT, 4)
    assert got.pieces.tolist() == [[0, 1, 2, 3], [20, 21, 22, 23], [24, 25, 26, 27]]
    assert got.pieces.dtype == np.uint16
    assert got.doc_index.tolist() == [0, 2, 2]
    # doc 0 drops 4, 5, 6; doc 1 (3 < 4 tokens) gives no piece; doc 2 divides exactly
    assert got.discarded_tokens == 3 + 3 and got.short_docs == 1
    assert EOT not in got.pieces


def test_pieces_with_eot():
    got = document_pieces(SPLIT, 4, include_eot=True)
    assert got.pieces.tolist() == [[0, 1, 2, 3], [4, 5, 6, EOT], [10, 11, 12, EOT],
                                   [20, 21, 22, 23], [24, 25, 26, 27]]
    assert got.doc_index.tolist() == [0, 0, 1, 2, 2]
    assert got.discarded_tokens == 1 and got.short_docs == 0  # doc 2's EOT


def test_longer_than_every_document_and_length_one():
    none = document_pieces(SPLIT, 9)
    assert none.pieces.shape == (0, 9) and none.doc_index.shape == (0,)
    assert none.discarded_tokens == 7 + 3 + 8 and none.short_docs == 3
    ones = document_pieces(SPLIT, 1)
    assert ones.pieces.ravel().tolist() == [*range(7), *range(10, 13), *range(20, 28)]
    assert ones.discarded_tokens == 0


def test_pieces_never_cross_a_boundary():
    rng = np.random.default_rng(0)
    docs = [np.full(n, d) for d, n in enumerate(rng.integers(0, 40, size=30))]
    split = _split(docs)
    for length in (1, 5, 16):
        got = document_pieces(split, length)
        assert (got.pieces == got.doc_index[:, None]).all()  # one document per piece
        lengths = np.array([len(d) for d in docs])
        assert np.bincount(got.doc_index, minlength=30).tolist() == (lengths // length).tolist()
        assert got.discarded_tokens == int((lengths % length).sum())


@pytest.mark.parametrize("length", [0, -3, 2.5, True])
def test_bad_length(length):
    with pytest.raises(ValueError, match="piece length must be a positive integer"):
        document_pieces(SPLIT, length)


def test_on_prepared_files(tmp_path):
    split = load_split(make_corpus(tmp_path, n_docs=5, words_per_doc=120), "train")
    got = document_pieces(split, 32)
    docs = list(split.documents())
    assert len(got.pieces) == sum(len(d) // 32 for d in docs)
    assert np.array_equal(got.pieces[0], docs[0][:32])
    assert split.meta["dataset"]["eot_token"] not in got.pieces
