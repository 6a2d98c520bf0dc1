"""Is a corpus prepared again the committed one? Each rebuilt meta.json against the committed run's
record of the same path (its raw results), on every fact both record.

Why not the meta's sha256: a model's identity names its training corpus by the digest of meta.json
(``corpus_meta_sha256``), and meta.json has gained facts since the committed runs were made (the
splits' sha256, document ids and offsets, the meta's own digest), so a corpus rebuilt today has
another digest whatever its text. What can be compared is what both metas record: documents and
tokens per split, tokens per component of a mix, the tokenizer, the packages read (their version and
sha256; when they were fetched is left out). A fact only one side records is listed, not compared.

    python -m lenex.data.rebuild_check --committed results/workstation/raw/lex.part-run.jsonl.xz ... \\
        --rebuilt results/workstation/data/train_mix/meta.json ... --out <check>.json
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json

from ..cli import run_cli
from ..files import atomic_write_text, read_json
from ..records.run_facts import git_revision

#: Facts that say when, not what: a package fetched again on another day is the same package.
WHEN = ("fetched_at",)


def shared_differences(rebuilt, committed, where: str = "") -> tuple[list[str], list[str], int]:
    """(differences, facts only one side records, facts compared) between two metas, walking every
    key both hold; lists are compared whole."""
    if isinstance(rebuilt, dict) and isinstance(committed, dict):
        differences, one_sided, compared = [], [], 0
        for key in sorted(set(rebuilt) | set(committed)):
            at = f"{where}.{key}" if where else key
            if key in WHEN:
                continue
            if key not in rebuilt or key not in committed:
                one_sided.append(f"{at} (only the {'rebuilt' if key in rebuilt else 'committed'} meta)")
                continue
            d, o, n = shared_differences(rebuilt[key], committed[key], at)
            differences += d
            one_sided += o
            compared += n
        return differences, one_sided, compared
    if rebuilt != committed:
        return [f"{where}: {str(rebuilt)[:80]!s} rebuilt, {str(committed)[:80]!s} committed"], [], 1
    return [], [], 1


def check(rebuilt_paths: list[str], committed: list[str]) -> dict:
    """Each rebuilt meta against every committed raw-results file holding its path."""
    from ..tables.raw_results import read_raw

    records = {raw: read_raw([raw]) for raw in committed}
    corpora = {}
    for path in rebuilt_paths:
        held = {raw: files[path] for raw, files in records.items() if path in files}
        if not held:
            raise ValueError(f"none of the committed raw results holds {path}: nothing to compare it with")
        rebuilt = read_json(path)
        against = {}
        for raw, meta in held.items():
            differences, one_sided, compared = shared_differences(rebuilt, meta)
            against[raw] = {"same": not differences, "facts_compared": compared,
                            "differences": differences, "not_compared": one_sided}
        corpora[path] = {"same": all(a["same"] for a in against.values()), "against": against}
    return {"revision": git_revision(), "date": _dt.date.today().isoformat(),
            "same": all(c["same"] for c in corpora.values()), "corpora": corpora}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rebuilt", nargs="+", required=True, help="prepared corpora's meta.json, rebuilt here")
    parser.add_argument("--committed", nargs="+", required=True, help="the committed runs' raw results")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = check(args.rebuilt, args.committed)
    result["command"] = "python -m lenex.data.rebuild_check --rebuilt " + " ".join(args.rebuilt) + \
        " --committed " + " ".join(args.committed) + f" --out {args.out}"
    atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    for path, corpus in result["corpora"].items():
        print(f"{path}: {'the committed corpus' if corpus['same'] else 'NOT the committed corpus'} "
              f"({', '.join(str(a['facts_compared']) for a in corpus['against'].values())} facts compared)")


if __name__ == "__main__":
    run_cli(main)
