"""The extrapolation profile's page and figure, generated from its JSON (lenex.hf.profile):

    python -m lenex.hf.profile_report --profile profile.json --md profile.md --png profile.png

Every number printed comes from the JSON; nothing is typed in.
"""

from __future__ import annotations

import argparse
import json

from ..cli import run_cli
from ..files import atomic_write, atomic_write_text, read_json
from ..records.checks import check_finite

MASK_LABELS = {"causal": "full causal", "blockwise": "BCA (blocks C/2)", "sliding": "sliding window (W = C)"}
REQUIRED = ("model", "context_length", "rows", "check")


def load_profile(path) -> dict:
    profile = read_json(path)
    missing = [k for k in REQUIRED if k not in profile]
    if missing:
        raise ValueError(f"{path}: not a profile JSON, missing key {missing[0]!r}")
    check_finite(profile, str(path))  # every number the page prints, finite
    return profile


def ppl_table(profile: dict) -> dict[int, dict[str, float]]:
    table: dict[int, dict[str, float]] = {}
    for row in profile["rows"]:
        table.setdefault(row["length"], {})[row["mask"]] = row["ppl"]
    return dict(sorted(table.items()))


def context_sentence(profile: dict) -> str:
    c, native = profile["context_length"], profile.get("native_context_length")
    if profile.get("context_is_native"):
        return f"Profiled context length C = {c} tokens: the model's own context length."
    return (f"Profiled context length C = **{c} tokens, not the model's native {native}**: the preset treats C as "
            f"the context to keep the run affordable, so \"8x\" here is {8 * c} tokens, which is "
            f"{'inside' if native and 8 * c <= native else 'beyond'} the length the model was trained for.")


def render_markdown(profile: dict) -> str:
    c = profile["context_length"]
    masks = list(MASK_LABELS)
    tokens = {row["tokens"] for row in profile["rows"]}
    lines = [f"# Extrapolation profile: {profile['model']}", "",
             f"Source: `{json.dumps(profile.get('source', {}), sort_keys=True)}` ({profile.get('architecture')}, "
             f"{profile.get('parameters', 0) / 1e6:.1f}M parameters, RoPE `{json.dumps(profile.get('rope'))}`), read "
             "through its own `transformers` forward with explicit position ids and 4D masks.", "",
             context_sentence(profile), "",
             f"Perplexity under the LEX protocol: every length scores the same {', '.join(map(str, sorted(tokens)))} "
             f"tokens of `{profile.get('data')}` ({profile.get('split')} split, re-tokenized with the model's "
             "tokenizer), each piece read as [EOT, t_0 .. t_{L-2}].", "",
             "| length | x C | " + " | ".join(MASK_LABELS[m] for m in masks) + " |",
             "|---:|---:|" + "---:|" * len(masks)]
    for length, ppl in ppl_table(profile).items():
        cells = [f"{ppl[m]:.3f}" if ppl.get(m) is not None else "not computed" for m in masks]
        lines.append(f"| {length} | {length / c:g} | " + " | ".join(cells) + " |")
    repeated = sorted({(r["length"], r["mask"], r["same_pairs_as"]) for r in profile["rows"] if r.get("same_pairs_as")})
    if repeated:
        lengths = ", ".join(map(str, sorted({r[0] for r in repeated})))
        labels = ", ".join(sorted({MASK_LABELS[r[1]] for r in repeated}))
        lines += ["", f"At {lengths} tokens {labels} "
                  "allow exactly the pairs full causal attention allows, so those cells repeat its numbers "
                  "(the computation is not run twice)."]
    check = profile["check"]
    lines += ["", f"Check at L = {check.get('length', c)}: transformers' own loss gives perplexity "
              f"{check['transformers_ppl']:.4f}, lenex's scoring {check['lenex_ppl']:.4f} "
              f"(relative difference {check.get('relative_difference', float('nan')):.2e}; the run fails above "
              f"{check.get('tolerance', 1e-3):.1%})."]
    bca = profile.get("bca_2x_vs_1x")
    if bca and "mean_nll_difference" not in bca:
        lines += ["", f"BCA at 2x C against 1x C: {bca['verdict']}."]
    elif bca:
        lines += ["", f"BCA at 2x C against BCA at 1x C, on the same tokens: mean log-loss difference "
                  f"{bca['mean_nll_difference']:+.4f} nats per token, standard error {bca['standard_error']:.4f} over "
                  f"{bca['groups']} groups of {bca['group_tokens']} tokens: measured **{bca['verdict']}** "
                  "(no worse: at most 2 standard errors above zero)."]
    if profile.get("resolution"):
        lines += ["", "Attention resolution (LEX Eq. 3-4; s[n] per layer and head, R averaged over them):", "",
                  "| length | x C | mask | texts | R | R of head-mean s |", "|---:|---:|---|---:|---:|---:|"]
        for r in profile["resolution"]:
            lines.append(f"| {r['length']} | {r['length'] / c:g} | {MASK_LABELS[r['mask']]} | {r['texts']} | "
                         f"{r['resolution']:.4f} | {r['resolution_of_head_mean_s']:.4f} |")
    for why in sorted({r["not_computed"] for r in profile["rows"] if r.get("not_computed")}):
        lengths = sorted({r["length"] for r in profile["rows"] if r.get("not_computed") == why})
        lines += ["", f"{why}: {', '.join(map(str, lengths))} tokens."]
    lines += ["", f"Run: {profile.get('seconds')} s on {profile.get('threads')} CPU thread(s), "
              f"scored span {profile.get('span')} tokens. Method: docs/hf-profile.md.", ""]
    return "\n".join(lines)


def plot(profile: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = profile["context_length"]
    table = ppl_table(profile)
    fig, ax = plt.subplots(figsize=(6, 4))
    for mask, label in MASK_LABELS.items():
        points = [(length, ppl[mask]) for length, ppl in table.items() if ppl.get(mask) is not None]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.axvline(c, color="grey", linestyle=":", label=f"C = {c}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("evaluation length (tokens)")
    ax.set_ylabel("perplexity")
    ax.set_title(f"{profile['model']}: extrapolation profile")
    ax.legend()
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--md", required=True)
    parser.add_argument("--png", required=True)
    args = parser.parse_args(argv)
    profile = load_profile(args.profile)
    plot(profile, args.png)
    atomic_write_text(args.md, render_markdown(profile))


if __name__ == "__main__":
    run_cli(main)
