# Helpers of the fairseq backend and the cross-check (rules in fairseq.smk; docs/fairseq.md).
# `train_launcher` also serves the `train` rule (train.smk), whichever the backend.

from lenex.fairseq_backend import require_fairseq

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
    """The binarized corpus; asking for it without fairseq installed stops the workflow at once
    with the one line naming `make setup-fairseq` (before any job runs)."""
    require_fairseq()
    return [
        f"results/{preset_name}/data-fairseq/{corpus}/{name}" for name in FAIRSEQ_FILES
    ]


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
    return launcher("lenex.train", train_gpus(preset_name, paper))


def crosscheck_train_config(preset_name, paper, backend, seed):
    """The preset's training (with its `crosscheck.train` laid over it), on `backend` with `seed`;
    the validation loss is measured at every logging interval (lenex's fixed validation windows),
    which is the curve the page compares.
    """
    train = {
        **paper_preset(preset_name, paper)["train"],
        **preset(preset_name).get("crosscheck", {}).get("train", {}),
    }
    return {
        **train,
        "backend": backend,
        "seed": int(seed),
        "eval_every": train["log_every"],
    }


def crosscheck_budget(preset_name):
    """What the page says each cross-check model trained on (the same for every backend and seed)."""
    train = crosscheck_train_config(preset_name, CROSSCHECK["paper"], "lenex", 1)
    return {
        key: train[key]
        for key in ("steps", "batch_size", "lr", "warmup")
        if key in train
    }


def crosscheck_evaluations(preset_name):
    spec, train_length = (
        CROSSCHECK,
        paper_preset(preset_name, "lex")["model"]["train_length"],
    )
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
