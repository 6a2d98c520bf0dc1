# Paper-scale plan: every job of a paper's tables at one preset, with its declared resources
# and GPU-hours (training from the preset's measured throughput), or at a CPU preset CPU-hours
# (training from the cost model's measurement, benchmarks.preset_cost), before anything runs:
#   snakemake --cores 1 results/paper/plan/lex.md


rule plan:
    input:
        preset_file=lambda wc: pipeline.settings.preset_file(wc.preset),
        experiment_file=lambda wc: pipeline.settings.experiment_file(wc.paper),
        cost=lambda wc: pipeline.resources.cost_model_file(wc.preset),
    output:
        md="results/{preset}/plan/{paper}.md",
        json="results/{preset}/plan/{paper}.json",
    log:
        "results/{preset}/logs/plan/{paper}.log",
    conda:
        ENV
    params:
        targets=lambda wc: pipeline.targets.plan_tables(wc.preset, wc.paper),
        cost=lambda wc, input: f"--cost {input.cost}" if input.cost else "",
    shell:
        "python -m lenex.pipeline.launch lenex.pipeline.plan --preset-file {input.preset_file} --paper {wildcards.paper}"
        " {params.cost} --targets {params.targets} --out-md {output.md} --out-json {output.json} > {log} 2>&1"
