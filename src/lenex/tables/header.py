"""A table's header facts: at which scale our numbers were produced, on what data, from which
code. `build_header` is every paper's table header, the one builder: the facts every table shares
(the preset and its model, the data's stand-ins and sizes, the seeds per model, the run's revision, device and date)
with a paper's own facts laid over them (`facts`: the receptive-field protocol and seeds, the
segmented paper's models and domain data; each paper's table module says them). LEX's tables
read it as a file (`python -m lenex.tables.header --preset-file P --corpora JSON --metas M..
--results R.. --out H.json`, which lenex.tables.render reads); the other papers' renderers call it
in their own process.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_yaml
from ..experiment.presets import paper_view, shared_view
from .raw_results import laid_over, read_recorded
from .seeds import seeds_fact
from ..records.run_facts import RUN_FACTS, recorded  # RUN_FACTS: which code, on which device, when


def split_size(meta: dict, split: str) -> tuple:
    """(documents, tokens) of a corpus split from its meta.json, "?" where not recorded."""
    facts = meta.get("splits", {}).get(split, {})
    return facts.get("n_docs", "?"), facts.get("n_tokens", "?")


def stand_in(corpus: str, spec: dict, paper_data: str | None = None) -> str:
    """'<the paper's data> -> <our stand-in's description>' for one corpus of the config."""
    return f"{spec.get('stands_in_for', paper_data or corpus)} -> {spec.get('description', '?')}"




def run_record(results: list[dict]) -> dict:
    """The run's facts as the evaluations recorded them, not the renderer's."""
    return {key: recorded(results, key) for key in RUN_FACTS}


def describe_training(corpus: str, meta: dict, corpora: dict, stands_in_for: str) -> str:
    docs, tokens = split_size(meta, "train")
    spec = corpora.get(corpus, {})
    return (
        f"train split of `{corpus}` ({spec.get('description', '?')}): {docs} documents, "
        f"{tokens} tokens; stands in for {stands_in_for}"
    )


def scored_fact(results: list[dict]) -> str | int | None:
    """What the cells scored, per corpus: the tokens and, where the records say it
    (lenex.scoring.sample), the documents the spans were drawn from and their share of the split.
    Records from before the spans were drawn across the split say that they read its first
    documents; results that record no scored tokens (other protocols) give their token count."""
    first = results[0] if results else {}
    by_corpus: dict[str, dict] = {}
    for r in results:
        if r.get("protocol") == "lex" and r.get("tokens"):
            by_corpus.setdefault(r.get("corpus", "?"), r)
    if not by_corpus:
        return first.get("tokens")
    parts = []
    for corpus, r in sorted(by_corpus.items()):
        scored = r.get("scored")
        if scored is None:
            parts.append(f"{corpus}: {r['tokens']}, the first test documents in id order (recorded before spans "
                         "were drawn across the split; docs/lex.md)")
        elif scored["rule"] == "first-documents":
            parts.append(f"{corpus}: {r['tokens']} from the first {scored['documents_scored']} of "
                         f"{scored['documents']} test documents in id order ({scored['token_share']:.1%} of the split)")
        else:
            parts.append(f"{corpus}: {r['tokens']} in {scored['spans']} spans drawn across {scored['documents_scored']} "
                         f"of the {scored['eligible']} test documents holding one ({scored['documents']} in the split; "
                         f"{scored['token_share']:.1%} of its tokens)")
    return "; ".join(parts)


def build_header(preset: dict, corpora: dict, metas: dict[str, dict], results: list[dict],
                 training_data: str | None = None, unavailable: dict | None = None,
                 facts: dict | None = None) -> dict:
    """The header of a table of `results` at `preset` (as its paper sees it), describing the corpora
    of `metas`, with the paper's own `facts` laid over (a fact it restates keeps its place)."""
    first = results[0] if results else {}
    model = {**preset["model"], **recorded_architecture(results)}
    stand_ins = {}
    for corpus, meta in metas.items():
        docs, tokens = split_size(meta, "test")
        stand_ins[corpus] = f"{stand_in(corpus, corpora.get(corpus, {}))}; test split {docs} documents, {tokens} tokens"
    return {
        "preset": preset["name"],
        "preset_description": preset["description"],
        "n_params": first.get("params"),
        "n_layer": model["n_layer"],
        "d_model": model["d_model"],
        "n_head": model["n_head"],
        "train_length": model["train_length"],
        "steps": first.get("steps"),
        "tokens_seen": first.get("tokens_seen"),
        "training_data": training_data,
        "scored_tokens": scored_fact(results),
        "stand_ins": stand_ins,
        "unavailable": dict(unavailable or {}),
        "seeds": seeds_fact(results),
        **scaled_options_fact(preset, results),
        **run_record(results),
        **reruns_fact(),
        **(facts or {}),
    }


def reruns_fact() -> dict:
    """Where the evaluations come from when re-runs supersede the reference run's (raw_results.laid_over)."""
    reruns = laid_over()
    if not reruns:
        return {}
    folders = sorted({str(Path(r).parent) for r in reruns})
    return {"evaluations_from": f"the re-runs {', '.join(Path(r).name for r in reruns)} (in {', '.join(folders)}), which "
            "hold every seed of these cells and supersede the reference run's evaluations of them; the reference "
            f"run's table: {', '.join(f + '/reference/' for f in folders)}"}


def scaled_options(positions: dict, results: list[dict]) -> str | None:
    """'xpos scale_base 128; alibi slope_scale 4': each option a preset's `positions` section
    scales, with the values the models behind `results` ran with (their recorded model_config),
    listed only where one of them used it; None where none did."""
    parts = []
    for scheme, options in (positions or {}).items():
        configs = [r["model_config"] for r in results
                   if (r.get("model_config") or {}).get("position") == scheme]
        for option in options or {}:
            values = {json.dumps(c["position_options"][option]) for c in configs
                      if option in (c.get("position_options") or {})}
            if values:
                parts.append(f"{scheme} {option} {' / '.join(sorted(values))}")
    return "; ".join(parts) or None


def scaled_options_fact(view: dict, results: list[dict]) -> dict:
    """The header's `scaled_scheme_options` fact, or nothing where the preset scales no option
    the models used (a preset without `positions`, such as tiny, keeps its header as it was)."""
    text = scaled_options(view.get("positions") or {}, results)
    return {"scaled_scheme_options": text} if text else {}


def recorded_architecture(results: list[dict]) -> dict:
    """Layers, width and heads of the models behind the cells, where every record agrees on
    them (their recorded model_config): the scale line then says what was run, not what the
    preset file says now."""
    out = {}
    for key in ("n_layer", "d_model", "n_head"):
        values = {r["model_config"][key] for r in results if key in r.get("model_config", {})}
        if len(values) == 1:
            out[key] = values.pop()
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset-file", required=True)
    parser.add_argument("--paper", default=None, help="read the preset as this paper sees it (its papers.<paper> block)")
    parser.add_argument("--corpora", default="{}", help="JSON: the config's corpora section")
    parser.add_argument("--metas", nargs="*", default=[], help="meta.json of each corpus the table reads")
    parser.add_argument("--train-meta", default=None, help="meta.json of the training corpus")
    parser.add_argument("--train-stands-in-for", default="the paper's training data")
    parser.add_argument("--results", nargs="*", default=[], help="evaluation JSON files")
    parser.add_argument("--unavailable", default="{}",
                        help="JSON: corpus -> why this machine could not build it")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    preset = read_yaml(args.preset_file)  # a duplicate key or a syntax error names file and line
    preset = paper_view(preset, args.paper) if args.paper else shared_view(preset)
    metas = {Path(m).parent.name: read_recorded(m) for m in args.metas}
    results = [read_recorded(r) for r in args.results]
    corpora = json.loads(args.corpora)
    training = None
    if args.train_meta:
        meta_path = Path(args.train_meta)
        training = describe_training(meta_path.parent.name, read_recorded(meta_path), corpora,
                                     args.train_stands_in_for)
    header = build_header(preset, corpora, metas, results, training, json.loads(args.unavailable))
    atomic_write_text(args.out, json.dumps(header, indent=1) + "\n")


if __name__ == "__main__":
    run_cli(main)
