"""The workflow's own Python, importable and tested without Snakemake: the pipeline's named parts
the rules in workflow/rules/ call (workflow.Pipeline: settings, paths, resources, evaluation,
identities, checks, code, recorded, targets, report, hf), the paper interface and its registry
(papers), how jobs start (launch), what a preset costs (plan), the variants checked when the DAG is
built (variants), and the reference-run records and page (reference_record, reference)."""
