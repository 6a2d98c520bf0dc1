"""What the rules of the fairseq backend and its cross-check read (rules in fairseq.smk; a
training on the backend is the `train` rule's, its launcher and inputs from its spec,
lenex.pipeline.specs; docs/fairseq.md).
Every function takes the workflow's `Pipeline` (lenex.pipeline.workflow) and reads the parts it needs."""

from __future__ import annotations

from . import require_fairseq

FAIRSEQ_FILES = ["dict.txt", "lenex-source.json"] + [
    f"{split}.{ext}" for split in ("train", "valid", "test") for ext in ("bin", "idx")]


def binarized_folder(preset: str, corpus: str) -> str:
    """fairseq's binarized copy of a prepared corpus (rule binarize_fairseq)."""
    return f"results/{preset}/data-fairseq/{corpus}"


def fairseq_data_files(preset: str, corpus: str) -> list[str]:
    """The binarized corpus; asking for it without fairseq installed stops the workflow at once
    with the one line naming `make setup-fairseq` (before any job runs)."""
    require_fairseq()
    return [f"{binarized_folder(preset, corpus)}/{name}" for name in FAIRSEQ_FILES]


def crosscheck_spec(pipeline, preset: str) -> dict:
    """What the cross-check compares (config `crosscheck`, with the preset's `crosscheck` laid over
    it): its paper, corpus, variants, backends, seeds, multiples of L_tr and the variant also
    scored with blockwise attention beyond L_tr."""
    own = {k: v for k, v in (pipeline.settings.preset(preset).get("crosscheck") or {}).items() if k != "train"}
    return {**pipeline.settings.config["crosscheck"], **own}


def crosscheck_train_config(pipeline, preset: str, paper: str, backend: str, seed) -> dict:
    """The preset's training (with its `crosscheck.train` laid over it), on `backend` with `seed`;
    the validation loss is measured at every logging interval (lenex's fixed validation windows),
    which is the curve the page compares."""
    train = {**pipeline.settings.paper_preset(preset, paper)["train"],
             **(pipeline.settings.preset(preset).get("crosscheck") or {}).get("train", {})}
    return {**train, "backend": backend, "seed": int(seed), "eval_every": train["log_every"]}


def crosscheck_model(pipeline, wildcards):
    """The spec (lenex.pipeline.specs.ModelSpec) of one cross-check model: the variant as the
    preset trains it, on `backend` with `seed` (one torch thread, so both backends get the same
    CPU), its checkpoint labelled with its backend."""
    import dataclasses

    preset, paper, variant, backend = wildcards.preset, wildcards.paper, wildcards.variant, wildcards.backend
    settings, root = pipeline.settings, f"results/{preset}/crosscheck/{backend}/s{wildcards.seed}"
    own, view = settings.paper(paper), settings.paper_spec(preset, paper)
    spec = own.model_spec(view.view, settings.experiment(paper), f"{variant}/seed1")
    spec = dataclasses.replace(spec, seed=int(wildcards.seed), output=f"{root}/models/{paper}/{variant}.pt",
                               workdir=f"{root}/train/{paper}/{variant}", labels=own.labels(preset, variant, backend=backend),
                               train=crosscheck_train_config(pipeline, preset, paper, backend, wildcards.seed), threads=1)
    return pipeline.specs.launch(pipeline.specs.completed(spec), view)


def crosscheck_expect(pipeline, wildcards) -> str:
    """`--expect` of a cross-check evaluation: the model of its backend and seed."""
    from ..pipeline.settings import quoted_json

    seed = crosscheck_train_config(pipeline, wildcards.preset, wildcards.paper, wildcards.backend,
                                   wildcards.seed)["seed"]
    return quoted_json(pipeline.identities.expected_model(wildcards.preset, wildcards.paper, wildcards.variant, seed,
                                               backend=wildcards.backend))


def crosscheck_budget(pipeline, preset: str) -> dict:
    """What the page says each cross-check model trained on (the same for every backend and seed)."""
    train = crosscheck_train_config(pipeline, preset, crosscheck_spec(pipeline, preset)["paper"], "lenex", 1)
    return {key: train[key] for key in ("steps", "batch_size", "lr", "warmup") if key in train}


def crosscheck_page_spec(pipeline, preset: str) -> dict:
    """The page's arguments (lenex.fairseq_backend.crosscheck --spec)."""
    spec = crosscheck_spec(pipeline, preset)
    return {**spec, "preset": preset, "train_length": pipeline.settings.train_length(preset, spec["paper"]),
            "train": crosscheck_budget(pipeline, preset)}


def crosscheck_runs(pipeline, preset: str):
    """(root of one backend and seed's run, the spec) for each backend and seed."""
    spec = crosscheck_spec(pipeline, preset)
    for backend in spec["backends"]:
        for seed in spec["seeds"]:
            yield f"results/{preset}/crosscheck/{backend}/s{seed}", spec


def crosscheck_models(pipeline, preset: str) -> list[str]:
    return [f"{root}/models/{spec['paper']}/{variant}.pt"
            for root, spec in crosscheck_runs(pipeline, preset) for variant in spec["variants"]]


def crosscheck_evaluations(pipeline, preset: str) -> list[str]:
    """Every evaluation the page reads: each model at each multiple of L_tr, causal, and the
    blockwise variant's also blockwise beyond L_tr."""
    files = []
    for root, spec in crosscheck_runs(pipeline, preset):
        train_length = pipeline.settings.train_length(preset, spec["paper"])
        for variant in spec["variants"]:
            for multiple in spec["multiples"]:
                length = pipeline.settings.eval_length(preset, multiple, spec["paper"])
                masks = ["causal"] + (["blockwise"] if variant == spec["bca_variant"] and length > train_length else [])
                files += [f"{root}/eval/{spec['paper']}/{variant}/{spec['corpus']}/{mask}/L{length}.json"
                          for mask in masks]
    return files
