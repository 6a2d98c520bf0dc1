# Corpus stage: fetch offline sources into resources/, then split and tokenize per preset.


rule fetch_shakespeare:
    output:
        SHAKESPEARE_FILES,
    log:
        "resources/logs/fetch_shakespeare.log",
    conda:
        ENV
    shell:
        "python -m lenex.data.fetch shakespeare --out resources/shakespeare > {log} 2>&1"


rule prepare_corpus:
    input:
        corpus_inputs,
    output:
        multiext(
            "results/{preset}/data/{corpus}/",
            "train.bin",
            "valid.bin",
            "test.bin",
            "meta.json",
        ),
    log:
        "results/{preset}/logs/prepare/{corpus}.log",
    conda:
        ENV
    params:
        spec=lambda wc: quoted_json(config["corpora"][wc.corpus]),
        data=lambda wc: preset(wc.preset)["data"],
        out=lambda wc: f"results/{wc.preset}/data/{wc.corpus}",
    shell:
        "python -m lenex.data.prepare --source-spec {params.spec} --resources resources"
        " --out {params.out} --tokenizer {params.data[tokenizer]} --seed {params.data[seed]}"
        " --valid-fraction {params.data[valid_fraction]} --test-fraction {params.data[test_fraction]}"
        " > {log} 2>&1"
