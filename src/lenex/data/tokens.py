"""Cut a prepared split into evaluation pieces (the split itself is read by
``lenex.data.store.load_split``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .store import TokenSplit


@dataclass(frozen=True)
class DocumentPieces:
    """Result of ``document_pieces``.

    pieces:           (n_pieces, length) array of the split's dtype, in document order
    doc_index:        (n_pieces,) int64: the document (index into doc_offsets) of each piece
    discarded_tokens: tokens in no piece: every remainder plus every too-short document
    short_docs:       documents shorter than ``length`` (they give no piece at all)
    """
    pieces: np.ndarray
    doc_index: np.ndarray
    discarded_tokens: int
    short_docs: int


def document_pieces(split: TokenSplit, length: int, include_eot: bool = False) -> DocumentPieces:
    """The segmented-sequences evaluation rule (Karypis et al. 2023, section 4.5): one
    document per sequence, no packing; each document is cut from its start into
    non-overlapping pieces of ``length`` tokens and the remainder is discarded, so no
    piece crosses a document boundary. A document's trailing EOT counts as one of its
    tokens only with ``include_eot``."""
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"piece length must be a positive integer, got {length!r}")
    starts = split.doc_offsets[:-1]
    ends = split.doc_offsets[1:] - (0 if include_eot else 1)
    n_per_doc = (ends - starts) // length
    chunks = [split.tokens[s:s + n * length].reshape(n, length)
              for s, n in zip(starts.tolist(), n_per_doc.tolist()) if n > 0]
    pieces = (np.concatenate(chunks) if chunks
              else np.zeros((0, length), dtype=split.tokens.dtype))
    return DocumentPieces(
        pieces=pieces,
        doc_index=np.repeat(np.arange(split.n_docs, dtype=np.int64), n_per_doc),
        discarded_tokens=int((ends - starts).sum() - n_per_doc.sum() * length),
        short_docs=int((n_per_doc == 0).sum()),
    )
