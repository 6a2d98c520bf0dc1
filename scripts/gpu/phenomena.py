"""The papers' phenomena in minutes on one GPU (docs/gpu-phenomena.md), through lenex's own modules
(lenex.training.train, lenex.scoring.evaluate, lenex.receptive_field.last_token, lenex.claims), no
Snakemake:

    python scripts/gpu/phenomena.py run --out DIR [--dry-run]   # train, score, judge, render
    python scripts/gpu/phenomena.py predict [--out FILE]        # the predictions, from committed data

Five models at ONE shape fixed here before any GPU run (PLAN): Sinusoidal, ALiBi, RoPE, xPos and
ALiBi with the Delta = 6 shifted slopes, each trained to a fixed token budget on the carried corpus
(scripts/gpu/phenomena-corpus, built by build_phenomena_corpus.py), then scored at 1, 2, 4 and 8 x
L_tr with the LEX protocol (every token of whole pieces) and the receptive-field paper's last-token
protocol. The cells are LEX Table 2's (and, for the shifted slopes, the receptive-field paper's
Table 1) in lenex's cells-file format, so the presets' claim evaluator judges them unchanged.

A wall-clock guard (PLAN.guard_s per model) is checked between chunks of training: a model that
reaches it stops there, is recorded "stopped at guard" with the tokens it saw, and its cells stay
empty. results.json is rewritten after every model, so a killed run keeps what finished.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# The configuration the recorded H100 rates were measured with (benchmarks/results/cuda-h100,
# 2026-11-22, before the FlexAttention path existed): eager, SDPA over materialised masks. Compiling
# would add an unmeasured cold compile per model and per evaluation shape to a 40 s budget.
os.environ.setdefault("LENEX_COMPILE", "0")
os.environ.setdefault("LENEX_ATTENTION_KERNEL", "reference")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

CARRIED = ROOT / "scripts/gpu/phenomena-corpus"  # meta.json, SHA256SUMS and each split's tokens as <file>.xz


def unpack_corpus(carried: Path, into: Path) -> Path:
    """The carried corpus made readable: its xz-compressed token files (compressed so the tree sent
    to the GPU machine stays small) decompressed into `into` beside its meta.json, and every file
    checked against SHA256SUMS (digests of the uncompressed files). One error names a mismatch."""
    import hashlib
    import lzma

    into.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(carried / "meta.json", into / "meta.json")
    for packed in sorted(carried.glob("*.xz")):
        with lzma.open(packed) as src, open(into / packed.name[:-3], "wb") as dst:
            shutil.copyfileobj(src, dst)
    for line in (carried / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        path = into / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise SystemExit(f"phenomena: {carried / name} does not match its SHA256SUMS: rebuild the corpus with "
                             "scripts/gpu/build_phenomena_corpus.py")
    return into


CORPUS = CARRIED  # its meta.json is read as it is carried (the predictions read the split sizes)
PREDICTIONS = ROOT / "scripts/gpu/phenomena-predictions.md"
SWEEPS = ROOT / "config/sweeps.yaml"
SCALE_POINTS = ROOT / "results/scale-study/points.jsonl"
SHIFT_SWEEP = ROOT / "results/scale-study/sweeps/rf-shift-budget/points"
# The plan and the claims it judges are data (phenomena-plan.json, with each value's reason), so the
# forecasts read them without running this script.
PLAN_FILE = ROOT / "scripts/gpu/phenomena-plan.json"
_PLAN = json.loads(PLAN_FILE.read_text(encoding="utf-8"))
CLAIM_IDS, PLAN = _PLAN["claims"], _PLAN["plan"]
DRY_PLAN = {**PLAN, "shape": {"n_layer": 1, "d_model": 32, "n_head": 2, "d_ff": 64}, "train_length": 16,
            "batch_size": 4, "train_tokens": 16 * 4 * 8, "guard_s": 60.0, "chunks": 2,
            "last_token_segments": 16, "batch_tokens": 4096, "max_scored_tokens": 2048}

# name -> (label, lenex model of config/sweeps.yaml `models` or None for the bare position,
# position, the cells it fills: (table, dataset, method, mask beyond L_tr, protocol))
MODELS = {
    "sinusoidal": ("Sinusoidal (Transformer)", None, "sinusoidal", [("2", "pg22", "transformer", None, "lex")]),
    "alibi": ("ALiBi", "lex-alibi", None, [("2", "pg22", "alibi", None, "lex")]),
    "rope": ("RoPE (RoFormer)", "lex-rope", None, [("2", "pg22", "roformer", None, "lex")]),
    "xpos": ("xPos (LEX: BCA beyond L_tr)", None, "xpos", [("2", "pg22", "lex", "blockwise", "lex"),
                                                         ("2", "pg22", "lex-without-bca", None, "lex")]),
    "alibi-shift-6": ("ALiBi, slopes shifted by Delta = 6", "rf-alibi-shift-6", None,
                      [("1", "arxiv", "alibi-shift-delta=6", None, "last-token")]),
}
PAPER_TABLES = {"2": ("lex", 1024), "1": ("sandwich", 512)}  # table -> (paper_results paper, paper's L_tr)


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def model_config(name: str, plan: dict, vocab_size: int):
    from lenex.config import ModelConfig
    from lenex.files import read_yaml

    _, sweep_model, position, _ = MODELS[name]
    options = {}
    if sweep_model:
        entry = read_yaml(SWEEPS)["models"][sweep_model]
        position, options = entry["position"], dict(entry.get("position_options") or {})
    return ModelConfig(**plan["shape"], vocab_size=vocab_size, dropout=0.0, position=position,
                       position_options=options, mask="causal", train_length=plan["train_length"])


def train_config(plan: dict):
    """The sweeps' optimiser settings (config/sweeps.yaml `train`), at this plan's batch and steps."""
    from lenex.config import TrainConfig
    from lenex.files import read_yaml

    settings = dict(read_yaml(SWEEPS)["train"])
    warmup = settings.pop("warmup_fraction")
    settings["batch_size"] = plan["batch_size"]
    steps = plan["train_tokens"] // (plan["batch_size"] * plan["train_length"])
    chunk = max(1, steps // plan["chunks"])
    return TrainConfig.from_dict({**settings, "steps": steps, "warmup": int(round(warmup * steps)),
                                  "log_every": chunk, "checkpoint_every": chunk, "seed": 1})


def train_guarded(name: str, plan: dict, data_dir: Path, work: Path, device: str) -> dict:
    """Train in chunks of steps (resumed exactly from the trainer's own state), checking the wall
    clock between chunks. {status, seconds, tokens_seen, ...}: finished, or stopped at guard."""
    import torch
    from lenex.training.train import train

    store = json.loads((data_dir / "meta.json").read_text())
    cfg, model_cfg = train_config(plan), model_config(name, plan, store["vocab_size"])
    model_path, workdir = work / f"{name}.pt", work / f"train-{name}"
    shutil.rmtree(workdir, ignore_errors=True)
    chunk, started, done, summary = max(1, cfg.steps // plan["chunks"]), time.time(), 0, None
    while summary is None:
        if time.time() - started > plan["guard_s"]:
            return {"status": "stopped at guard", "seconds": time.time() - started, "steps": done,
                    "steps_planned": cfg.steps, "tokens_seen": done * cfg.batch_size * model_cfg.train_length,
                    "guard_s": plan["guard_s"]}
        summary = train(model_cfg, cfg, data_dir, model_path, workdir, stop_after=chunk, device=device)
        done = min(cfg.steps, done + chunk)
        if device != "cpu" and torch.cuda.is_available():
            torch.cuda.synchronize()
    seconds = time.time() - started
    metrics = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines() if line]
    return {"status": "finished", "seconds": seconds, "steps": summary["step"], "steps_planned": cfg.steps,
            "tokens_seen": summary["tokens_seen"], "tokens_per_s": summary["tokens_seen"] / seconds,
            "final_loss": summary["final_loss"], "valid_loss": summary["valid_loss"], "params": summary["params"],
            "compile": summary["compile"], "attention_kernel": summary.get("attention_kernel"),
            "device": summary["device"], "curve": [{k: m[k] for k in ("step", "loss") if k in m} for m in metrics],
            "model_config": model_cfg.to_dict(), "train_config": cfg.to_dict(), "checkpoint": str(model_path)}


def score(name: str, plan: dict, data_dir: Path, checkpoint: Path, device: str) -> dict:
    """ppl at every multiple of L_tr by both protocols, each with its per-piece NLLs and the digest
    of the scored tokens (what the claims' paired test over pieces reads)."""
    import hashlib

    import torch
    from lenex.data.store import load_split
    from lenex.masks import build_mask, default_mask_options
    from lenex.receptive_field import last_token
    from lenex.records.checkpoint import load_model
    from lenex.scoring.evaluate import evaluate_length, scored_span

    model, _ = load_model(checkpoint)
    model.to(torch.device(device))
    length, multiples = plan["train_length"], plan["multiples"]
    span = max(multiples) * length
    test = load_split(data_dir, "test")
    eot = test.meta["dataset"]["eot_token"]
    # The carried test split is already drawn across every test document (build_phenomena_corpus):
    # all of it is scored, unless a dry run caps it.
    tokens, skipped = scored_span(test.documents(), span, plan.get("max_scored_tokens") or len(test.tokens))
    digest = hashlib.sha256(tokens.astype(np.uint16).tobytes()).hexdigest()
    result = {"scored_tokens": int(len(tokens)), "scored_documents": int(test.n_docs - skipped),
              "span": span, "lex": {}, "last_token": {}}
    for _, _, method, beyond, protocol in MODELS[name][3]:
        if protocol != "lex":
            continue
        rows = {}
        for k in multiples:
            mask_name = beyond if beyond and k > 1 else "causal"
            mask = build_mask(mask_name, default_mask_options(mask_name, length))
            got = evaluate_length(model, tokens, k * length, span, mask, eot, plan["batch_tokens"], length)
            rows[str(k)] = {"ppl": got["ppl"], "nll": got["nll"], "mask": mask_name, "span_nll": got["span_nll"],
                            "scored_tokens_sha256": digest}
        result["lex"][method] = rows
    records = last_token.evaluate(model, np.asarray(test.tokens), [k * length for k in multiples], span,
                                  plan["last_token_segments"], plan["batch_tokens"])
    result["last_token"] = {str(r["length"] // length): {k: r[k] for k in ("ppl", "nll", "segment_nll",
                                                                         "scored_tokens_sha256")} for r in records}
    return result


def cells_of(results: dict, plan: dict) -> dict[str, dict]:
    """The stage's cells in lenex's cells-file format (lenex.tables.cells), one table per paper table."""
    from lenex.tables.paper_results import load_paper_results, paper_value

    df, tables = load_paper_results(), {}
    for name, (label, _, _, fills) in MODELS.items():
        record = results["models"].get(name)
        for table, dataset, method, _, protocol in fills:
            paper_name, paper_ltr = PAPER_TABLES[table]
            target = tables.setdefault(table, {"table": table, "paper": paper_name, "metric": "ppl",
                                               "title": f"GPU phenomena stage, {paper_name} Table {table} cells",
                                               "extra": {}, "cells": [], "version": 1})
            for k in plan["multiples"]:
                cell = {"dataset": dataset, "corpus": "pg22", "method": method, "variant": name, "row": label,
                        "multiple": k, "our_length": k * plan["train_length"], "paper_length": k * paper_ltr,
                        "paper": paper_value(df, paper_name, table, dataset, method, k * paper_ltr),
                        "paper_mark": None, "ours_mark": None, "paper_std": None, "ours": None,
                        "status": "not computed: not run"}
                if record and record["train"]["status"] != "finished":
                    cell["status"] = (f"not computed: {record['train']['status']} after "
                                      f"{record['train']['tokens_seen']:,} of {plan['train_tokens']:,} tokens")
                elif record and "scores" in record:
                    got = (record["scores"]["lex"][method][str(k)] if protocol == "lex"
                           else record["scores"]["last_token"][str(k)])
                    unit, field = ("span", "span_nll") if protocol == "lex" else ("segment", "segment_nll")
                    cell.update(ours=got["ppl"], status="ok", protocol=protocol,
                                ours_pieces={"unit": unit, "nll": got[field], "tokens_sha256": got["scored_tokens_sha256"]})
                target["cells"].append(cell)
    return tables


def narrowed(check, produced: set[str]):
    """The check with only the comparisons whose cells this stage produces (an `all` keeps the
    children it can evaluate; any other node is kept whole or dropped whole); None if none is left."""
    from lenex.claims.evaluate import references
    from lenex.claims.refs import expand

    kind, args = next(iter(check.items()))
    if kind == "all":
        kept = [c for c in (narrowed(child, produced) for child in args) if c is not None]
        return {"all": kept} if kept else None
    refs = [r for ref in references(check) for r in expand(ref)]
    return check if all(r in produced for r in refs) else None


def judge(tables: dict[str, dict]) -> list[dict]:
    """Each claim of CLAIM_IDS evaluated by lenex.claims.evaluate.evaluate_claim on the stage's cells,
    its check narrowed to the cells produced here (said in the record)."""
    from lenex.claims.evaluate import evaluate_claim, load_claims, references
    from lenex.claims.refs import expand

    produced = {f"t{t}/{c['dataset']}/{c['method']}@{c['multiple']:g}" for t, table in tables.items()
                for c in table["cells"]}
    records = []
    for paper, ids in CLAIM_IDS.items():
        claims = {c["id"]: c for c in load_claims(ROOT / "config/claims" / f"{paper}.yaml")["claims"]}
        for ident in ids:
            claim = claims[ident]
            check = narrowed(claim["check"], produced)
            distinct = lambda tree: {r for ref in references(tree) for r in expand(ref)}  # noqa: E731
            total, kept = len(distinct(claim["check"])), len(distinct(check)) if check else 0
            fails = [r for ref in (claim.get("paper_fails") or {}).get("cells", []) for r in expand(ref) if r in produced]
            # the paper's listed failures narrowed with the check: those on cells this stage produces
            staged = {**claim, "check": check, "paper_fails": {**claim["paper_fails"], "cells": fails} if fails else None}
            record = evaluate_claim(staged, tables) if check else {
                "id": ident, "verdict": "untestable", "evidence": "no cell of its check is produced here"}
            record["narrowed_to"] = f"{kept} of the {total} cells its check reads (those this stage produces)"
            records.append(record)
    return records


def write_results(out: Path, results: dict) -> None:
    from lenex.files import atomic_write_text

    atomic_write_text(out / "results.json", json.dumps(results, indent=1, sort_keys=True) + "\n")


def run(out: Path, dry_run: bool, device: str, only: list[str] | None = None) -> dict:
    import torch
    from lenex.data.store import load_split, read_meta

    plan = DRY_PLAN if dry_run else PLAN
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if not dry_run and device != "cuda":
        raise SystemExit("phenomena: the full run needs a CUDA GPU; on a CPU use --dry-run (toy sizes)")
    out.mkdir(parents=True, exist_ok=True)
    # Checkpoints and trainer state live outside OUT: the device tool returns at most 8 files from
    # it, so a killed run must not leave them where the JSON and the page are.
    work = Path(tempfile.mkdtemp(prefix="lenex-phenomena-"))
    corpus = unpack_corpus(CARRIED, work / "corpus")
    meta = read_meta(corpus, require=("splits", "vocab_size"))
    results = {"dry_run": dry_run, "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
               "torch": torch.__version__, "started_utc": utc_now(), "plan": plan,
               "environment": {k: os.environ.get(k) for k in ("LENEX_COMPILE", "LENEX_ATTENTION_KERNEL")},
               "corpus": {"dir": str(CORPUS.relative_to(ROOT)), "tokenizer": meta["tokenizer"],
                          "vocab_size": meta["vocab_size"], "stands_in": meta["source"].get("stands_in_for", ""),
                          "train_tokens": meta["splits"]["train"]["n_tokens"],
                          "meta_sha256": meta.get("meta_sha256")},
               "models": {}}
    load_split(corpus, "train")  # the carried files against their digests, before any training
    for name in only or list(MODELS):
        record = {"name": name, "train": train_guarded(name, plan, corpus, work, device)}
        if record["train"]["status"] == "finished":
            began = time.time()
            record["scores"] = score(name, plan, corpus, Path(record["train"]["checkpoint"]), device)
            record["score_seconds"] = time.time() - began
            results["scored_tokens"] = record["scores"]["scored_tokens"]
            results["scored_documents"] = record["scores"]["scored_documents"]
        results["models"][name] = record
        write_results(out, results)  # after every model: a killed run keeps what finished
    results["finished_utc"] = utc_now()
    write_results(out, results)
    shutil.rmtree(work, ignore_errors=True)  # checkpoints are not kept: the page and JSON are the record
    try:
        return render(out, results)
    except ImportError as err:  # a machine without lenex's table dependencies: the JSON is complete
        print(f"phenomena: results.json written; the page needs {err.name} ({err}): run "
              f"`python scripts/gpu/phenomena.py render --out {out}` where lenex's dependencies are installed")
        return results


def render(out: Path, results: dict | None = None) -> dict:
    """Cells, claims and page from results.json alone (`render` re-derives them on any machine).
    The claim evaluator needs jsonschema, which the GPU machine lacks: there the page says the claims
    were not judged and how to judge them from the JSON it wrote."""
    results = results or json.loads((out / "results.json").read_text())
    plan = results["plan"]
    tables = cells_of(results, plan)
    for table, content in tables.items():
        (out / f"table{table}.cells.json").write_text(json.dumps(content, indent=1) + "\n")
    try:
        claims = judge(tables)
    except ImportError as err:
        why = (f"not judged on this machine ({err}): run `python scripts/gpu/phenomena.py render --out DIR` "
               "where lenex's dependencies are installed")
        claims = [{"id": i, "verdict": why, "narrowed_to": "—"} for ids in CLAIM_IDS.values() for i in ids]
    results["claims"] = claims
    write_results(out, results)
    from phenomena_page import render_page  # scripts/gpu/, beside this file

    (out / "phenomena.md").write_text(render_page(results, tables, claims, plan))
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/gpu-phenomena")
    go.add_argument("--dry-run", action="store_true", help="toy sizes on the CPU (the script's own test)")
    go.add_argument("--device", default="auto")
    go.add_argument("--only", nargs="+", choices=list(MODELS))
    again = sub.add_parser("render", help="cells, claims and page again from OUT/results.json")
    again.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/gpu-phenomena")
    pr = sub.add_parser("predict")
    pr.add_argument("--out", type=Path, default=PREDICTIONS)
    args = parser.parse_args(argv)
    if args.command == "predict":
        from phenomena_predict import predictions_page  # scripts/gpu/, beside this file

        args.out.write_text(predictions_page())
        print(f"wrote {args.out}")
        return
    if args.command == "render":
        results = render(args.out)
    else:
        results = run(args.out, args.dry_run, args.device, args.only)
    print(json.dumps({"out": str(args.out), "models": {n: r["train"]["status"] for n, r in results["models"].items()},
                      "claims": {c["id"]: c["verdict"] for c in results.get("claims", [])}}))


if __name__ == "__main__":
    main()
