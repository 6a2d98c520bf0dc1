# Extrapolation profile of a Hugging Face causal LM (config/hf_models.yaml, docs/hf-profile.md):
#   snakemake --cores 2 results/tiny/hf/smollm2-135m/profile.md
# Not part of rule all: at tiny it costs minutes of a 135M-parameter model on CPU.
# Its settings (pipeline.hf: model, scale, source): lenex.pipeline.hf_profile.


rule hf_tokens:
    input:
        lambda wc: pipeline.paths.data_files(
            wc.preset, pipeline.hf.models_config()["corpus"]
        ),
    output:
        meta="results/{preset}/hf/{hf_name}/tokens/meta.json",
        test="results/{preset}/hf/{hf_name}/tokens/test.bin",
    log:
        "results/{preset}/logs/hf/{hf_name}/tokens.log",
    wildcard_constraints:
        hf_name=r"[A-Za-z0-9._-]+",
    conda:
        ENV
    params:
        data=lambda wc: f"results/{wc.preset}/data/{pipeline.hf.models_config()['corpus']}",
        source=lambda wc: pipeline.hf.source(wc.hf_name),
        eot=lambda wc: pipeline.hf.eot_option(wc.hf_name),
    shell:
        "python -m lenex.pipeline.launch lenex.segmented.retokenize --data {params.data} --source {params.source}"
        " --splits test {params.eot} --out results/{wildcards.preset}/hf/{wildcards.hf_name}/tokens"
        " > {log} 2>&1"


rule hf_profile:
    input:
        rules.hf_tokens.output,
    output:
        "results/{preset}/hf/{hf_name}/profile.json",
    log:
        "results/{preset}/logs/hf/{hf_name}/profile.log",
    wildcard_constraints:
        hf_name=r"[A-Za-z0-9._-]+",
    conda:
        ENV
    threads: lambda wc: pipeline.hf.scale(wc.preset)["threads"]
    params:
        source=lambda wc: pipeline.hf.source(wc.hf_name),
        scale=lambda wc: pipeline.hf.scale(wc.preset),
        extra=lambda wc: quoted_json({"preset": wc.preset}),
    shell:
        "python -m lenex.pipeline.launch lenex.hf.profile --name {wildcards.hf_name} --source {params.source}"
        " --data results/{wildcards.preset}/hf/{wildcards.hf_name}/tokens"
        " --context-length {params.scale[context_length]}"
        " --max-tokens {params.scale[max_tokens]}"
        " --resolution-tokens {params.scale[resolution_tokens]}"
        " --batch-tokens {params.scale[batch_tokens]}"
        " --threads {threads} --extra {params.extra} --out {output} > {log} 2>&1"


rule hf_profile_page:
    input:
        rules.hf_profile.output,
    output:
        md="results/{preset}/hf/{hf_name}/profile.md",
        png="results/{preset}/hf/{hf_name}/profile.png",
    log:
        "results/{preset}/logs/hf/{hf_name}/page.log",
    wildcard_constraints:
        hf_name=r"[A-Za-z0-9._-]+",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.hf.profile_report --profile {input} --md {output.md}"
        " --png {output.png} > {log} 2>&1"
