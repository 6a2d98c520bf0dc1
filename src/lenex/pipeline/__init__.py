"""The workflow's own Python: how jobs start (launch), what a preset costs (plan), the variants
checked when the DAG is built (variants), the reference-run records and page (reference_record,
reference), and the helpers the rules in workflow/rules/ call, importable and tested without
Snakemake."""
