"""Content digests: sha256 of what an artefact holds, written beside its content when it is saved
and compared with it wherever it is read, so a file changed after it was written (a flipped byte, a
split overwritten in place at the same size, a record edited by hand) is one error naming it.

- a file's bytes: `file_sha256` (streamed; prepared token files);
- a JSON value: `json_sha256` (keys sorted, compact; evaluation records and meta.json embed it under
  `CONTENT_KEY`);
- a torch payload: `payload_sha256` (every tensor's dtype, shape and bytes, every plain value;
  checkpoints and resume states embed it under `CONTENT_KEY`).

A file written before digests carries none; its readers take it as before (docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import json
import os

#: The key under which a JSON record or a torch payload carries the digest of the rest of it.
CONTENT_KEY = "content_sha256"
_CHUNK = 1 << 20


class DigestMismatch(ValueError):
    """A file whose content is not the content its digest was computed from."""


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def json_sha256(value) -> str:
    """sha256 of a JSON value in one canonical text (sorted keys, compact, floats as repr), so the
    same value read back and hashed again gives the same digest whatever its key order on disk."""
    # As it reads back: tuples as lists, integer keys as strings (sort_keys cannot mix the two).
    plain = json.loads(json.dumps(value, allow_nan=False))
    text = json.dumps(plain, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def without_digest(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != CONTENT_KEY}


def sealed(record: dict) -> dict:
    """The record with its digest (of everything else in it) under CONTENT_KEY, last."""
    body = without_digest(record)
    return {**body, CONTENT_KEY: json_sha256(body)}


def payload_sha256(payload) -> str:
    """sha256 of a torch payload (nested dicts, lists, tuples, tensors and plain values): the same
    for the payload saved and the payload loaded back, whatever the file's zip layout."""
    digest = hashlib.sha256()
    _feed(digest, payload)
    return digest.hexdigest()


def _feed(digest, value) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        digest.update(f"T{value.dtype}{tuple(value.shape)}:".encode())
        if flat.numel():
            digest.update(flat.view(torch.uint8).numpy())  # the tensor's bytes, not copied
    elif isinstance(value, dict):
        digest.update(f"D{len(value)}:".encode())
        for key in sorted(value, key=repr):
            _feed(digest, key)
            _feed(digest, value[key])
    elif isinstance(value, (list, tuple)):
        digest.update(f"{'L' if isinstance(value, list) else 'U'}{len(value)}:".encode())
        for item in value:
            _feed(digest, item)
    else:  # str, int, float, bool, None, torch.dtype, torch.Size: their repr is exact
        text = f"{type(value).__name__}:{value!r};"
        digest.update(f"S{len(text)}:{text}".encode())


def payload_sealed(payload: dict) -> dict:
    """A torch payload with the digest of the rest of it under CONTENT_KEY."""
    body = without_digest(payload)
    return {**body, CONTENT_KEY: payload_sha256(body)}


def _digest_error(content: dict, digest_of, verb: str) -> str | None:
    recorded = content.get(CONTENT_KEY)
    if recorded is None:
        return None
    actual = digest_of(without_digest(content))
    if actual != recorded:
        return f"its content does not match the digest it was {verb} with ({CONTENT_KEY} {recorded[:12]}..., content {actual[:12]}...)"
    return None


def payload_digest_error(payload: dict) -> str | None:
    """Why a loaded payload is not what was saved ('its content does not match its digest'), or None
    (it matches, or it was written before digests and carries none)."""
    return _digest_error(payload, payload_sha256, "saved")


def record_digest_error(record: dict) -> str | None:
    """The same for a JSON record (an evaluation's result, a meta.json)."""
    return _digest_error(record, json_sha256, "written")
    actual = json_sha256(without_digest(record))
    if actual != recorded:
        return f"its content does not match the digest it was written with ({CONTENT_KEY} {recorded[:12]}..., content {actual[:12]}...)"
    return None
