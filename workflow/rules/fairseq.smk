# fairseq as a second training backend, and the cross-check of lenex's trainer against it
# (docs/fairseq.md). Needs `make setup-fairseq`; the default run never reaches these rules
# unless a preset sets `train: {backend: fairseq}`.

FAIRSEQ_FILES = ["dict.txt", "lenex-source.json"] + [
    f"{split}.{ext}" for split in ("train", "valid", "test") for ext in ("bin", "idx")
]
# The cross-check: LEX Table 2's four variants, two seeds per backend, perplexity on PG22 at
# 1/4 .. 4 x L_tr (causal; xPos also with blockwise causal attention beyond L_tr, as Table 2).
CROSSCHECK = {
    "paper": "lex",
    "corpus": "pg22",
    "variants": ["transformer", "alibi", "rope", "xpos"],
    "backends": ["lenex", "fairseq"],
    "seeds": [1, 2],
    "multiples": [0.25, 0.5, 1, 2, 4],
    "bca_variant": "xpos",
}


def train_backend(preset_name, paper):
    return paper_preset(preset_name, paper)["train"].get("backend", "lenex")


def fairseq_data_files(preset_name, corpus):
    return [f"results/{preset_name}/data-fairseq/{corpus}/{name}" for name in FAIRSEQ_FILES]


def backend_inputs(preset_name, paper, backend):
    """Inputs a training job needs beyond lenex's token files: fairseq's binarized copy."""
    if backend != "fairseq":
        return []
    return fairseq_data_files(preset_name, training_corpus(paper))


def train_launcher(preset_name, paper, backend):
    """The trainer's command up to its shared arguments (--model-config ... --threads)."""
    if backend == "fairseq":
        folder = f"results/{preset_name}/data-fairseq/{training_corpus(paper)}"
        return f"python -m lenex.fairseq_backend.train --bin {folder}"
    gpus = rule_resources(preset_name, "train", "gpus", 0, paper)
    if gpus > 1:
        return f"torchrun --standalone --nproc_per_node {gpus} -m lenex.train"
    return "python -m lenex.train"


def crosscheck_train_config(preset_name, paper, backend, seed):
    """The preset's training, on `backend` with `seed`; the validation loss is measured at every
    logging interval (lenex's fixed validation windows), which is the curve the page compares."""
    train = dict(paper_preset(preset_name, paper)["train"])
    return {**train, "backend": backend, "seed": int(seed), "eval_every": train["log_every"]}


def crosscheck_evaluations(preset_name):
    spec, train_length = CROSSCHECK, paper_preset(preset_name, "lex")["model"]["train_length"]
    files = []
    for backend in spec["backends"]:
        for seed in spec["seeds"]:
            root = f"results/{preset_name}/crosscheck/{backend}/s{seed}/eval/{spec['paper']}"
            for variant in spec["variants"]:
                for multiple in spec["multiples"]:
                    length = eval_length(preset_name, multiple, spec["paper"])
                    masks = ["causal"]
                    if variant == spec["bca_variant"] and length > train_length:
                        masks.append("blockwise")
                    files += [
                        f"{root}/{variant}/{spec['corpus']}/{mask}/L{length}.json"
                        for mask in masks
                    ]
    return files


rule binarize_fairseq:
    input:
        lambda wc: data_files(wc.preset, wc.corpus),
    output:
        [f"results/{{preset}}/data-fairseq/{{corpus}}/{name}" for name in FAIRSEQ_FILES],
    log:
        "results/{preset}/logs/data-fairseq/{corpus}.log",
    conda:
        ENV
    params:
        data="results/{preset}/data/{corpus}",
        out="results/{preset}/data-fairseq/{corpus}",
    shell:
        "python -m lenex.fairseq_backend.binarize --data {params.data} --out {params.out}"
        " > {log} 2>&1"


# One cross-check model: the `train` rule with the backend and seed taken from the path.
use rule train as crosscheck_train with:
    input:
        lambda wc: data_files(wc.preset, training_corpus(wc.paper))
        + backend_inputs(wc.preset, wc.paper, wc.backend),
    output:
        "results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/train/{paper}/{variant}.log",
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(
            crosscheck_train_config(wc.preset, wc.paper, wc.backend, wc.seed)
        ),
        data=lambda wc: f"results/{wc.preset}/data/{training_corpus(wc.paper)}",
        workdir="results/{preset}/crosscheck/{backend}/s{seed}/train/{paper}/{variant}",
        threads=1,
        launcher=lambda wc: train_launcher(wc.preset, wc.paper, wc.backend),


use rule evaluate as crosscheck_evaluate with:
    input:
        model="results/{preset}/crosscheck/{backend}/s{seed}/models/{paper}/{variant}.pt",
        data=lambda wc: data_files(wc.preset, wc.corpus),
    output:
        "results/{preset}/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.json",
    log:
        "results/{preset}/logs/crosscheck/{backend}/s{seed}/eval/{paper}/{variant}/{corpus}/{mask}/L{length}.log",


rule crosscheck_fairseq:
    input:
        evaluations=lambda wc: crosscheck_evaluations(wc.preset),
        models=lambda wc: [
            f"results/{wc.preset}/crosscheck/{b}/s{s}/models/{CROSSCHECK['paper']}/{v}.pt"
            for b in CROSSCHECK["backends"]
            for s in CROSSCHECK["seeds"]
            for v in CROSSCHECK["variants"]
        ],
    output:
        md="results/{preset}/crosscheck/fairseq.md",
        json="results/{preset}/crosscheck/fairseq.json",
    log:
        "results/{preset}/logs/crosscheck/fairseq.log",
    conda:
        ENV
    params:
        spec=lambda wc: quoted_json(
            {
                **CROSSCHECK,
                "preset": wc.preset,
                "train_length": paper_preset(wc.preset, "lex")["model"]["train_length"],
            }
        ),
    shell:
        "python -m lenex.fairseq_backend.crosscheck --spec {params.spec}"
        " --evaluations {input.evaluations} --models {input.models}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
