# Evaluation stage: every perplexity and attention-resolution cell (LEX Eq. 3-4, section 4.3) of a
# model (variant and seed) on one corpus at one length under one mask, with the LEX protocol (every
# length scores the same span of the test split). One mechanism (lenex.pipeline.evaluation): a job
# scores a group of cells of one model in one process, each cell its own file; the preset chooses
# the group. At a CPU preset one job per model, measure and corpus scores the cells the tables read
# (a rule per preset and group, over its measure's rule); at a GPU preset, and for any cell no table
# reads (the fairseq cross-check's: fairseq.smk), the measure's rule (`evaluate`, `resolution`)
# scores the one cell of its path.
for _rule in pipeline.evaluation.rules(scorer="lenex.lex.evaluate_model"):

    rule:
        name:
            _rule.name
        input:
            model=_rule.model,
            data=_rule.data,
            code=_rule.code,
        output:
            _rule.outputs,
        log:
            _rule.log,
        conda:
            ENV
        threads: _rule.threads
        resources:
            **_rule.resources,
        params:
            cells=_rule.cells,
            span=_rule.span,
            max_tokens=_rule.max_tokens,
            batch_tokens=_rule.batch_tokens,
            expect=_rule.expect,
        shell:
            "python -m lenex.pipeline.launch lenex.lex.evaluate_model --checkpoint {input.model} --cells {params.cells}"
            " --span {params.span} --max-tokens {params.max_tokens} --batch-tokens {params.batch_tokens}"
            " --threads {threads} --expect {params.expect} > {log} 2>&1"


for _order in pipeline.evaluation.rule_orders():
    workflow.ruleorder(*_order)
