"""The GPU phenomena stage's page (docs/gpu-phenomena.md): training, the cells of LEX Table 2 and of
the receptive-field paper's Table 1 as paper / ours, and the claims as lenex.claims judged them."""
from __future__ import annotations

from phenomena import MODELS, PAPER_TABLES


def _fmt(x, digits=2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def render_page(results: dict, tables: dict, claims: list[dict], plan: dict) -> str:
    meta = results["corpus"]
    lines = [f"# The papers' phenomena on one GPU: LEX Table 2 at one small shape{' (DRY RUN, CPU toy sizes)' if results['dry_run'] else ''}",
             "",
             f"Run {results['started_utc']} on {results['device']}, by `scripts/gpu/phenomena.sh` through lenex's own "
             "modules (lenex.training.train, lenex.scoring.evaluate, lenex.receptive_field.last_token, "
             "lenex.claims.evaluate): no Snakemake on the GPU machine. Eager training with the reference attention "
             "kernel (the configuration the recorded H100 rates were measured with).",
             "",
             f"Shape {plan['shape']['n_layer']} x {plan['shape']['d_model']} ({plan['shape']['n_head']} heads, d_ff "
             f"{plan['shape']['d_ff']}), L_tr = {plan['train_length']}, batch {plan['batch_size']} x L_tr, "
             f"{plan['train_tokens']:,} training tokens a model, one seed; corpus: {meta['stands_in']} "
             f"({meta['tokenizer']}, vocabulary {meta['vocab_size']}; train {meta['train_tokens']:,} tokens, "
             f"scored {results.get('scored_tokens', 0):,} test tokens from {results.get('scored_documents', 0)} documents). "
             "Paper: LEX Table 2 on PG22 (L_tr = 1024, 24 x 1024); the shifted slopes: the receptive-field paper's "
             "Table 1 on arXiv (L_tr = 512), beside ours on the PG22 stand-in.",
             "", "## Training", "",
             "| model | status | tokens | seconds | tokens/s | final loss | valid loss |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, (label, *_rest) in MODELS.items():
        rec = results["models"].get(name)
        if rec is None:
            lines.append(f"| {label} | not run | — | — | — | — | — |")
            continue
        t = rec["train"]
        lines.append(f"| {label} | {t['status']} | {t['tokens_seen']:,} | {t['seconds']:.1f} | "
                     f"{_fmt(t.get('tokens_per_s'), 0)} | {_fmt(t.get('final_loss'), 3)} | {_fmt(t.get('valid_loss'), 3)} |")
    for table, title in (("2", "LEX Table 2 (LEX protocol: every token of whole pieces)"),
                         ("1", "Receptive-field paper Table 1 (last-token protocol: the last token of "
                               f"{plan['last_token_segments']:,} segments spread over the test split)")):
        cells = tables[table]["cells"]
        head = PAPER_TABLES[table]
        lines += ["", f"## {title}: ppl, paper / ours", "",
                  "| row | " + " | ".join(f"{k} x L_tr (paper {k * head[1]} / ours {k * plan['train_length']})"
                                          for k in plan["multiples"]) + " |",
                  "|---|" + "---:|" * len(plan["multiples"])]
        for method in dict.fromkeys(c["method"] for c in cells):
            row = [c for c in cells if c["method"] == method]
            shown = [f"{_fmt(c['paper'])} / {_fmt(c['ours'])}" if c["ours"] is not None
                     else f"{_fmt(c['paper'])} / {c['status']}" for c in row]
            lines.append(f"| {row[0]['row']} ({method}) | " + " | ".join(shown) + " |")
    lines += ["", "## Claims, judged as the presets' are (lenex.claims.evaluate.evaluate_claim)", "",
              "Each claim's check is narrowed to the cells this stage produces (PG22-stand-in rows only: no QMSum, "
              "no Delta = 8, no Table 4, no 16 x L_tr); one model per scheme, so every comparison pairs over scored "
              "pieces (evaluation noise only, not seed noise).", "",
              "| claim | verdict | on paper | deciding comparison: test, interval (log scale) | cells | evidence |",
              "|---|---|---|---|---|---|"]
    for c in claims:
        interval = c.get("interval")
        decided = "—" if not interval else f"{c.get('test')}: [{interval[0]:+.3f}, {interval[1]:+.3f}]"
        lines.append(f"| {c['id']} | {c['verdict']} | {c.get('on_paper')} | {decided} | {c['narrowed_to']} | "
                     f"{c.get('evidence', '').replace('|', '/')} |")
    lines += ["", f"Predictions committed before the first GPU run: `scripts/gpu/phenomena-predictions.md`.", ""]
    return "\n".join(lines)
