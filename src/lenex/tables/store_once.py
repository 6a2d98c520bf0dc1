"""Store a committed preset's raw results once: the recorded parts of each reference run, compressed.

    python -m lenex.tables.store_once results/workstation/raw

A paper run in recorded parts used to commit each part's raw results and, beside them, the merged
file, which holds every line of the parts again. For each paper with parts here: the merged
`<paper>.jsonl` must be exactly what `merge` joins from the parts (else nothing is changed and the
error says which paper), then it is removed, and each part is replaced by `<part>.jsonl.xz`
(lenex.records.stored), checked to read back as the part. Under from_raw the paper is then rendered
from its parts read together (lenex.pipeline.recorded.Recorded.stored_raw): the same records.
Running it again changes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import run_cli
from ..pipeline.reference import part_files
from ..records.stored import SUFFIX, compress_file, read_text
from .raw_results import merge


def store_once(raw_dir: str | Path) -> list[str]:
    """Apply the above to `raw_dir` (a preset's raw/ folder); returns what it did, one line per file."""
    root = Path(raw_dir).parent
    done = []
    papers = part_files(root)
    for paper, parts in papers.items():  # every paper checked before any file is touched
        merged = root / "raw" / f"{paper}.jsonl"
        if merged.is_file() and read_text(merged) != merge([str(path) for path in parts.values()]):
            raise ValueError(f"{merged} is not the merge of its parts ({', '.join(p.name for p in parts.values())}): "
                             "nothing changed; merge them again (python -m lenex.tables.raw_results merge)")
    for paper, parts in papers.items():
        merged = root / "raw" / f"{paper}.jsonl"
        if merged.is_file():
            merged.unlink()
            done.append(f"removed {merged} (the merge of its {len(parts)} parts)")
        for path in parts.values():
            if not path.name.endswith(SUFFIX):
                done.append(f"compressed {path} -> {compress_file(path).name}")
    return done


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw_dir", help="a preset's raw-results folder, e.g. results/workstation/raw")
    args = parser.parse_args(argv)
    for line in store_once(args.raw_dir):
        print(line)


if __name__ == "__main__":
    run_cli(main)
