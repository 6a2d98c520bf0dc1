# Claims stage: each paper's claims (config/claims/<paper>.yaml) checked on the paper's numbers and on
# ours, from the cells files the table rules write (so re-rendering the tables re-derives the claims).
#   snakemake --cores 1 results/tiny/claims/lex.md     # one paper
#   snakemake --cores 1 results/tiny/claims.md         # the summary over papers
from lenex.claims import designed_sweeps
from lenex.claims import emergence as claims_emergence


rule paper_claims:
    input:
        cells=lambda wc: pipeline.targets.paper_cells(wc.preset, wc.paper),
        # every ERF, check and figure reference checked now (lenex.pipeline.dag_checks)
        claims=lambda wc: pipeline.checks.checked_claims(wc.paper),
        schema="workflow/schemas/claims.schema.yaml",
        study="results/scale-study/points.jsonl",
        # the committed emergence records: each claim's trends beside its verdict
        emergence=claims_emergence.emergence_files(workflow.basedir),
        # the sweeps designed for its claims, their plan and the parts run so far
        sweep_design=designed_sweeps.DESIGN,
        sweep_plan=designed_sweeps.PLAN,
        sweep_parts=designed_sweeps.part_files(workflow.basedir),
        # the claims as they stood before a reference run's data, evaluated beside today's
        frozen=lambda wc: pipeline.targets.frozen_claims(wc.preset, wc.paper),
        # where re-runs supersede a table's evaluations, the cells the reference run's records give:
        # the verdicts under its scoring, beside today's
        earlier=lambda wc: pipeline.targets.earlier_cells(wc.preset, wc.paper),
        code=pipeline.code.stamp("lenex.claims.render"),
    # update(): Snakemake keeps the previous page while the job runs and puts it back if the job
    # fails (it deletes the outputs of other failed jobs), so a broken claims file loses no page.
    output:
        md=update("results/{preset}/claims/{paper}.md"),
        json=update("results/{preset}/claims/{paper}.json"),
    log:
        "results/{preset}/logs/claims/{paper}.log",
    conda:
        ENV
    params:
        budget=lambda wc: quoted_json(
            pipeline.settings.claims_budget(wc.preset, wc.paper)
        ),
        tokenizer=lambda wc: pipeline.settings.preset(wc.preset)["data"]["tokenizer"],
        models=lambda wc: pipeline.settings.paper(wc.paper).claims_arguments(),
    shell:
        "python -m lenex.pipeline.launch lenex.claims.render paper --claims {input.claims} --schema {input.schema}"
        " --preset {wildcards.preset} --cells {input.cells} {params.models}"
        " --scale-study {input.study} --budget {params.budget} --tokenizer {params.tokenizer}"
        " --emergence {input.emergence} --sweep-design {input.sweep_design} --sweep-plan {input.sweep_plan}"
        " --sweep-parts {input.sweep_parts} --frozen {input.frozen} --earlier-cells {input.earlier}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"


rule claims_summary:
    input:
        claims=lambda wc: pipeline.targets.claims_summary_inputs(wc.preset),
        code=pipeline.code.stamp("lenex.claims.render"),
    output:
        "results/{preset}/claims.md",
    log:
        "results/{preset}/logs/claims/summary.log",
    conda:
        ENV
    shell:
        "python -m lenex.pipeline.launch lenex.claims.render summary --preset {wildcards.preset}"
        " --claims-json {input.claims} --out {output} > {log} 2>&1"
