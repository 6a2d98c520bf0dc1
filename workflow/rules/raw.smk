# Raw results (docs/raw-results.md): every recorded file a paper's tables, figures and page are
# rendered from, in one JSON-lines file per paper and preset, small enough to commit. Under
# `from_raw` (make tables) the raw results are the inputs, so this rule is not defined there.


if not pipeline.settings.from_raw:

    rule raw_results:
        input:
            files=lambda wc: pipeline.recorded.raw_inputs(wc.preset, wc.paper),
            code=pipeline.code.stamp("lenex.tables.raw_results"),
        output:
            "results/{preset}/raw/{paper}.jsonl",
        log:
            "results/{preset}/logs/raw/{paper}.log",
        conda:
            ENV
        shell:
            "python -m lenex.pipeline.launch lenex.tables.raw_results collect --files {input.files} --out {output} > {log} 2>&1"

    # One part of a reference run made in recorded parts (a preset's `reference_parts`): the raw
    # results of the part's corpora, written xz-compressed (committed as written, each record once);
    # under from_raw the paper is rendered from its parts read together (Recorded.stored_raw).
    use rule raw_results as raw_results_part with:
        input:
            files=lambda wc: pipeline.recorded.raw_inputs(wc.preset, wc.paper, wc.part),
            code=pipeline.code.stamp("lenex.tables.raw_results"),
        output:
            "results/{preset}/raw/{paper}.part-{part}.jsonl.xz",
        log:
            "results/{preset}/logs/raw/{paper}.part-{part}.log",

    # A re-run of one table's cells for some of its seeds at the code of the day (one that changed what
    # an evaluation scores, say), its models trained again: the raw results of those cells, their
    # corpora's metas and the models' training curves, committed beside the reference run's and
    # compared with them cell by cell (rule table_rerun_page, docs/raw-results.md).
    use rule raw_results as table_rerun with:
        input:
            files=lambda wc: pipeline.recorded.rerun_recorded(
                wc.preset, wc.paper, wc.table, wc.seeds
            ),
            code=pipeline.code.stamp("lenex.tables.raw_results"),
        output:
            "results/{preset}/reruns/{paper}/table{table}.seeds{seeds}.jsonl.xz",
        log:
            "results/{preset}/logs/reruns/{paper}/table{table}.seeds{seeds}.log",
