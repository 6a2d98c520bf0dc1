"""Dialogue stand-in for QMSum: the Chit-Chat Challenge conversations, read from inside
the PyPI wheel ``chitchat-dataset`` (fetched by ``python -m lenex.data.fetch chitchat``),
never installed.

Layout (chitchat-dataset 0.9.0): ``chitchat_dataset/dataset.json`` is one JSON object
``{conversation_id: {"messages": [[utterance, ...], ...], "start", "prompt", "ratings"}}``;
each inner list is one turn, a run of utterances ``{"text", "timestamp", "sender"}`` by
one sender. A conversation becomes one transcript, one line per turn, the senders'
ids mapped to letters in order of appearance (``A: ...`` / ``B: ...``), the utterances
of a turn joined by spaces.

Stats for the data card: ``python -m lenex.data.chitchat resources/chitchat``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import string
import zipfile
from pathlib import Path

from ..cli import run_cli
from .documents import Document
from .fetch import fetched_file

log = logging.getLogger(__name__)

DATASET_MEMBER = "chitchat_dataset/dataset.json"
_WHITESPACE = re.compile(r"\s+")


def speaker_letter(index: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA": enough letters for any number of speakers."""
    letters = string.ascii_uppercase
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = letters[rest] + name
    return name


def speaker_turns(turns: list[list[dict]]) -> list[tuple[str, str]]:
    """(speaker letter, turn text) per turn. Newlines inside an utterance are folded to
    spaces so a rendered line is always exactly one turn; empty utterances and turns
    are dropped."""
    letters: dict[str, str] = {}
    out = []
    for turn in turns:
        texts = [_WHITESPACE.sub(" ", u.get("text") or "").strip() for u in turn]
        texts = [t for t in texts if t]
        if not texts:
            continue
        senders = {u.get("sender") for u in turn}
        if len(senders) != 1:  # the format promises one sender per turn; check it
            raise ValueError(f"a turn mixes senders {sorted(map(str, senders))}")
        sender = senders.pop()
        if sender not in letters:
            letters[sender] = speaker_letter(len(letters))
        out.append((letters[sender], " ".join(texts)))
    return out


def read_chitchat_wheel(path: str | os.PathLike, min_speakers: int = 2) -> list[Document]:
    """One Document per conversation (group = conversation id), sorted by id.

    Conversations with fewer than ``min_speakers`` speakers are left out: in 0.9.0 they
    are 3,151 of 7,168, almost all a single unanswered opener (median 1 turn, 33
    characters), not dialogue."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as wheel:
            raw = wheel.read(DATASET_MEMBER)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"chitchat wheel not found: {path}; run "
            "`python -m lenex.data.fetch chitchat --out resources/chitchat`") from None
    except KeyError:
        raise ValueError(f"{path} has no {DATASET_MEMBER} (not a chitchat-dataset wheel?)") from None
    except zipfile.BadZipFile as e:
        raise ValueError(f"{path} is not a wheel (zip): {e}") from None
    data = json.loads(raw)
    if not isinstance(data, dict):
        # ValueError, not TypeError: bad input data, reported by run_cli as one line
        raise ValueError(f"{path}:{DATASET_MEMBER} is not a JSON object of conversations")  # noqa: TRY004
    docs = []
    for conv_id in sorted(data):
        try:
            turns = speaker_turns(data[conv_id]["messages"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: conversation {conv_id!r} is malformed: {e}") from None
        if turns and len({who for who, _ in turns}) >= min_speakers:
            doc_id = f"chitchat/{conv_id}"
            text = "\n".join(f"{who}: {text}" for who, text in turns)
            docs.append(Document(doc_id, doc_id, text))
    if not docs:
        raise ValueError(f"no conversations with at least {min_speakers} speakers in {path}")
    log.info("read %d conversations with >= %d speakers from %s (%d left out)",
             len(docs), min_speakers, path.name, len(data) - len(docs))
    return docs


def read_chitchat(directory: str | os.PathLike = "resources/chitchat",
                  min_speakers: int = 2) -> list[Document]:
    return read_chitchat_wheel(fetched_file(directory, "chitchat"), min_speakers)


def percentile(values: list[int], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), q in [0, 100]."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def corpus_stats(docs: list[Document], tokenizer_name: str = "gpt2") -> dict:
    """Conversations, turns, speakers and token-length distribution (for the card)."""
    from .tokenizer import get_tokenizer

    tokenizer = get_tokenizer(tokenizer_name)
    lengths = [len(ids) for ids in tokenizer.encode_batch([d.text for d in docs])]
    turns = [d.text.count("\n") + 1 for d in docs]
    return {
        "documents": len(docs),
        "turns": sum(turns),
        "turns_median": percentile(turns, 50),
        "tokenizer": tokenizer_name,
        "tokens": sum(lengths),
        "tokens_mean": round(statistics.fmean(lengths), 1),
        "tokens_median": percentile(lengths, 50),
        "tokens_p90": percentile(lengths, 90),
        "tokens_max": max(lengths),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Print the chitchat stand-in's statistics.")
    ap.add_argument("directory", nargs="?", default="resources/chitchat",
                    help="folder holding the fetched wheel and SOURCE.json")
    ap.add_argument("--tokenizer", default="gpt2")
    ap.add_argument("--min-speakers", type=int, default=2)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    docs = read_chitchat(args.directory, args.min_speakers)
    print(json.dumps(corpus_stats(docs, args.tokenizer), indent=2))


if __name__ == "__main__":
    run_cli(main)
