"""A checkpoint's identity: what a model is, recorded when it is trained and checked wherever it
is loaded, so one model is never scored, measured or converted as another.

Training writes `identity` into the checkpoint payload (`training_identity`): the labels its
caller gives (`lenex.training.train --identity '{"paper": "lex", "variant": "rope", "preset": "tiny"}'`),
the seed and steps, the whole ModelConfig (position scheme and options, mask, shape, training
length, vocabulary) and the corpus it was trained on (meta.json's tokenizer and vocab_size, the
sha256 of that meta.json).

Every entry point that reads a model checks it before scoring anything (`load_checked`):
(a) against each corpus it scores: meta.json's tokenizer must be the one the model was trained
    on, and its vocab_size the model's (a lenex model's vocabulary is its corpus's) or at most
    the model's (a released model's head may be padded, e.g. Pythia's 50304 rows for 50277 ids);
(b) against `--expect '<json object>'`: every field named must equal the checkpoint's.
A mismatch is one ValueError naming the checkpoint, the other file and the field.

Checkpoints written before identities were recorded still answer the model fields (their
`model_config`) and seed/steps (their `train_config`): those are checked. A field only an
identity holds (paper, variant, preset, tokenizer, any label) refuses such a checkpoint with
"records no identity ...: retrain it"; against a corpus, only the vocabulary is compared.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

IDENTITY_FORMAT = "lenex-identity-v1"
TRAIN_FIELDS = ("seed", "steps")  # from the train config
CORPUS_FIELDS = ("tokenizer", "corpus_vocab_size", "corpus_meta_sha256")  # from the corpus's meta.json


def training_identity(model_config: dict, train_config: dict, data_dir, labels: dict | None = None) -> dict:
    """The identity a training records in its checkpoint: labels, seed and steps, the model
    config and the training corpus's tokenizer, vocabulary and meta.json sha256."""
    from ..data.fetch import sha256_file
    from ..data.store import meta_path, read_meta

    labels = check_labels(labels or {})
    meta = read_meta(data_dir)
    return {"format": IDENTITY_FORMAT, **labels, **{k: train_config[k] for k in TRAIN_FIELDS},
            **model_config, "tokenizer": meta.get("tokenizer"), "corpus_vocab_size": meta.get("vocab_size"),
            "corpus_meta_sha256": sha256_file(meta_path(data_dir))}


def check_labels(labels) -> dict:
    """`--identity`'s labels: a JSON object of names to scalars (paper, variant, preset, ...);
    a label may not stand for a recorded field (seed is the train config's, vocab_size the
    model's...), which it would shadow."""
    from ..config import ModelConfig

    labels = _json_object(labels, "--identity")
    recorded = {*TRAIN_FIELDS, *CORPUS_FIELDS, *(f.name for f in dataclasses.fields(ModelConfig)), "format"}
    for key, value in labels.items():
        if key in recorded:
            raise ValueError(f"--identity {key}: a recorded field, not a label (the checkpoint records it itself)")
        if not isinstance(value, (str, int, float, bool)) and value is not None:
            raise ValueError(f"--identity {key}: {value!r} is not a label (a string or number)")
    return labels


def parse_expect(expect) -> dict:
    """`--expect`'s value: a JSON object of identity fields (a dict passes through)."""
    return _json_object(expect, "--expect")


def _json_object(value, option: str) -> dict:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(f"{option}: not valid JSON ({err.msg} at column {err.colno}): {value}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{option} must be a JSON object of identity fields, got {value!r}")
    return value


def recorded_facts(payload: dict) -> tuple[dict, bool]:
    """(what the checkpoint says it is, whether it records an identity). Without one, the model
    config and the train config's seed and steps still answer."""
    train = payload.get("train_config") or {}
    facts = {k: train[k] for k in TRAIN_FIELDS if k in train}
    facts.update(payload.get("model_config") or {})
    identity = payload.get("identity")
    if isinstance(identity, dict):
        facts.update({k: v for k, v in identity.items() if k != "format"})
    return facts, isinstance(identity, dict)


def expectation_problem(facts: dict, has_identity: bool, expect: dict) -> str | None:
    """Why the checkpoint is not the expected model (the first differing field), or None."""
    for field, expected in expect.items():
        if field not in facts:
            if not has_identity:
                return (f"records no identity (trained before lenex recorded one), so its {field} "
                        f"cannot be checked against the expected {expected!r}: retrain it")
            return f"records no {field} (not a label of its training's --identity), expected {expected!r}: retrain it"
        if facts[field] != expected:
            return f"{field} is {facts[field]!r}, expected {expected!r}"
    return None


def corpus_problem(facts: dict, exact_vocabulary: bool, meta: dict) -> str | None:
    """Why the model cannot score this corpus (tokenizer, vocabulary), or None."""
    tokenizer, vocab = meta.get("tokenizer"), meta.get("vocab_size")
    own_tokenizer, own_vocab = facts.get("tokenizer"), facts.get("vocab_size")
    said = f"the model's tokenizer is {own_tokenizer or 'unrecorded'!r} with {own_vocab} ids, the corpus's {tokenizer!r} with {vocab}"
    if own_tokenizer is not None and tokenizer is not None and own_tokenizer != tokenizer:
        return f"tokenizer differs: {said}"
    if isinstance(own_vocab, int) and isinstance(vocab, int):
        if own_vocab < vocab or (exact_vocabulary and own_vocab != vocab):
            return f"vocab_size differs: {said}"
    return None


def check_payload(checkpoint, payload: dict, data=(), expect=None, target=None) -> None:
    """Refuse (one ValueError naming both files and the field) a checkpoint that cannot score
    the corpora `data` (folders with meta.json) or is not the model `expect` describes."""
    from .checkpoint import FORMAT
    from ..data.store import meta_path, read_meta

    facts, has_identity = recorded_facts(payload)
    problem = expectation_problem(facts, has_identity, parse_expect(expect))
    if problem:
        raise ValueError(f"{checkpoint} is not the model {target or 'this job'} expects: {problem}")
    for folder in [data] if isinstance(data, (str, os.PathLike)) else data:
        problem = corpus_problem(facts, payload.get("format") == FORMAT, read_meta(folder))
        if problem:
            raise ValueError(f"{checkpoint} cannot score {meta_path(folder)}: {problem}")


def check_vocabulary_covers(model_name, vocab_size: int, data_dir) -> None:
    """A model without a recorded tokenizer (a released model read by name) has an embedding row
    for every token id of the corpus it scores."""
    from ..data.store import meta_path, read_meta

    problem = corpus_problem({"vocab_size": vocab_size}, False, read_meta(data_dir))
    if problem:
        raise ValueError(f"{model_name} cannot score {meta_path(data_dir)}: {problem}")


def load_checked(checkpoint, data=(), expect=None, target=None, **config_overrides):
    """lenex.records.checkpoint.load_model, then check_payload (before the caller scores anything):
    (model, payload)."""
    from .checkpoint import load_model

    model, payload = load_model(checkpoint, **config_overrides)
    check_payload(checkpoint, payload, data, expect, target)
    return model, payload


def add_expect_argument(parser) -> None:
    """`--expect`, which every entry point that reads a model accepts."""
    parser.add_argument("--expect", default="{}", help="JSON object of identity fields the checkpoint must "
                        "record (paper, variant, preset, seed, position, position_options, n_layer, ...)")


# What a result file says about its model, compared with the cell it fills (the table builders).
RESULT_LABELS = ("paper", "preset", "variant", "model")  # the labels a result and its checkpoint share
VARIANT_MODEL_KEYS = ("position", "position_module", "mask")
VARIANT_OPTION_KEYS = ("position_options", "mask_options")


def result_model_problem(record: dict, variants: dict, label: str = "variant") -> str | None:
    """Why a result record holds another model than the one its cell names (its `label`, a
    variant of `variants`), or None: its checkpoint's identity names another paper, preset,
    variant or model, or its model_config differs from what the variant sets."""
    identity = record.get("identity") or {}
    for key in RESULT_LABELS:
        if key in identity and key in record and identity[key] != record[key]:
            return f"its cell is {key} {record[key]!r}, its checkpoint {record.get('checkpoint')} records {identity[key]!r}"
    config, spec = record.get("model_config"), variants.get(record.get(label))
    if not isinstance(config, dict) or not isinstance(spec, dict):
        return None
    for key in VARIANT_MODEL_KEYS:
        if key in spec and config.get(key) != spec[key]:
            return (f"{label} {record[label]!r} has {key} {spec[key]!r}, the model scored ({record.get('checkpoint')}) "
                    f"has {config.get(key)!r}")
    for key in VARIANT_OPTION_KEYS:
        for option, value in (spec.get(key) or {}).items():
            if (config.get(key) or {}).get(option) != value:
                return (f"{label} {record[label]!r} has {key}.{option} {value!r}, the model scored "
                        f"({record.get('checkpoint')}) has {(config.get(key) or {}).get(option)!r}")
    return None


def check_result_models(results: list[dict], source, variants: dict, label: str = "variant") -> None:
    """A result file (`source`) whose records hold another model than their cells name is an
    error, never a row: one ValueError naming the file, the cell's model and the recorded one."""
    for record in results:
        problem = result_model_problem(record, variants, label)
        if problem:
            raise ValueError(f"{source}: {problem}: a cell would show another model's number; rerun the job that "
                             "writes it")


# What a table or figure job expects of the result files it reads (`--expect`, lenex.pipeline.identities):
# {"labels": {...}, "layouts": ["results/{preset}/eval/{paper}/{variant}/..."]}.
PATH_LABELS = ("paper", "preset", "variant", "model", "run", "corpus", "seed", "mask", "length")
IDENTITY_LABELS = ("paper", "preset", "variant", "model", "run", "corpus")  # what --identity labels


def layout_labels(path, layouts) -> dict | None:
    """The wildcards of the first layout (a rule's output pattern) that `path` matches, or None."""
    for layout in layouts:
        pattern, names = "", set()
        for literal, name in re.findall(r"([^{]*)(?:\{(\w+)\}|$)", layout):
            pattern += re.escape(literal)
            if name:
                pattern += f"(?P={name})" if name in names else f"(?P<{name}>[^/]+)"
                names.add(name)
        match = re.fullmatch(pattern, Path(path).as_posix())
        if match:
            return match.groupdict()
    return None


def result_path_problem(record: dict, path, expect: dict) -> str | None:
    """Why a result record is not the one its file's path names (a label of its own or of its
    checkpoint's identity differs from the path's or the job's), or None."""
    named = {**(layout_labels(path, expect.get("layouts") or ()) or {}), **(expect.get("labels") or {})}
    identity = record.get("identity") or {}
    for key in PATH_LABELS:
        if key not in named:
            continue
        said = [("records", record.get(key))]
        if key in IDENTITY_LABELS:  # a model's own labels (its mask and seed are its training's)
            said.append(("its checkpoint records", identity.get(key)))
        for who, value in said:
            if value is not None and str(value) != str(named[key]):
                return f"{who} {key} {value!r} where its path names {named[key]!r}"
    return None


def check_result_paths(records: list[dict], source, expect) -> None:
    """Each record of the result file `source` is the result its path names (`expect`, the table or
    figure job's): one ValueError naming the file, the label and both values."""
    expect = _json_object(expect, "--expect")
    for record in records:
        problem = result_path_problem(record, source, expect)
        if problem:
            raise ValueError(f"{source}: {problem}: it holds another cell's result; rerun the job that writes it")
