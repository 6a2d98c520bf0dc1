# Pretraining stage: one model per (preset, paper, variant). The resumable state lives in
# results/<preset>/train/, outside the declared output, so a rerun after a crash resumes.


rule train:
    input:
        lambda wc: data_files(wc.preset, experiment(wc.paper)["train_corpus"]),
    output:
        "results/{preset}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/train/{paper}/{variant}.log",
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "train", "threads", 1)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "train", "mem_mb", 2000),
        runtime=lambda wc: rule_resources(wc.preset, "train", "runtime", 60),
        gpu=lambda wc: rule_resources(wc.preset, "train", "gpus", 0),
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(preset(wc.preset)["train"]),
        data=lambda wc: f"results/{wc.preset}/data/{experiment(wc.paper)['train_corpus']}",
        workdir="results/{preset}/train/{paper}/{variant}",
    shell:
        "python -m lenex.train --model-config {params.model} --train-config {params.train}"
        " --data {params.data} --out {output} --workdir {params.workdir} --threads {threads}"
        " > {log} 2>&1"
