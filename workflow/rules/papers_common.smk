# Helpers of the three papers' rules (in lex.smk, receptive_field.smk and segmented.smk): what
# each table and figure reads from recorded results (evaluations, corpus metas), which are also
# the inputs of its raw results (rule raw_results) and under from_raw what they are served
# from, and the arguments of each paper's table renderer (the table interface, tables.smk).
# The file lists themselves are pure functions in lenex.<paper>.targets.
from lenex.lex import targets as lex_targets
from lenex.receptive_field import targets as rf_targets
from lenex.segmented import targets as seg_targets

# One name per paper: the rule files and their helpers use these.
LEX, RF, SEG = lex_targets.PAPER, rf_targets.PAPER, seg_targets.PAPER


def lex_table_recorded(preset_name, table):
    """The recorded files of one LEX table: results (evaluations or resolutions), corpus metas."""
    spec = table_spec(LEX, table)
    train_length = paper_preset(preset_name, LEX)["model"]["train_length"]
    return {
        "results": lex_targets.table_results(
            preset_name, spec, train_length, corpus_unavailable
        ),
        "metas": corpus_metas(
            preset_name, lex_targets.table_corpora(spec, corpus_unavailable)
        ),
    }


def lex_evaluation_jobs(preset_name):
    """The LEX tables' cells at a preset in evaluation jobs, one per model, measure and corpus:
    {(variant, stage, corpus): [cell spec with its result path]} (lenex.lex.targets.job_cells).
    """
    view = paper_preset(preset_name, LEX)
    jobs = lex_targets.job_cells(
        experiment(LEX)["tables"], view["model"]["train_length"], corpus_unavailable
    )
    return {
        key: [
            {
                "stage": stage,
                "data": f"results/{preset_name}/data/{corpus}",
                "mask": mask,
                "length": length,
                "out": lex_targets.cell_path(preset_name, cell),
                "extra": {
                    "variant": variant,
                    "corpus": corpus,
                    "paper": LEX,
                    "preset": preset_name,
                },
            }
            for cell in cells
            for stage, variant, corpus, mask, length in [cell]
        ]
        for key, cells in jobs.items()
    }


def lex_section_recorded(preset_name, table, corpus):
    """The results of one section of a LEX table (Figure 1 draws Table 2's PG22)."""
    spec = table_spec(LEX, table)
    train_length = paper_preset(preset_name, LEX)["model"]["train_length"]
    return lex_targets.section_results(
        preset_name, spec, train_length, corpus, corpus_unavailable
    )


def train_meta(preset_name, paper):
    """The training corpus's meta.json (the header's `trained on`)."""
    return data_files(preset_name, training_corpus(paper))[-1]


def rf_view(wc):
    """The receptive-field preset as the job's variant sees it: its budget group's model, train
    and sample sizes laid over the paper's (rf_targets.variant_view)."""
    return rf_targets.variant_view(
        paper_preset(wc.preset, RF), experiment(RF), wc.variant
    )


def receptive_field_table_recorded(preset_name, table):
    """The recorded files of one receptive-field table: results, ERFs, corpus metas."""
    spec = table_spec(RF, table)
    return {
        "results": rf_targets.table_results(
            preset_name, spec, paper_preset(preset_name, RF), corpus_unavailable
        ),
        "erf": rf_targets.table_erf_results(preset_name, spec, corpus_unavailable),
        "metas": corpus_metas(
            preset_name, rf_targets.table_corpora(spec, corpus_unavailable)
        ),
    }


def receptive_field_figure_recorded(preset_name, figure):
    figures = experiment(RF)["figures"]
    return rf_targets.figure_results(preset_name, figures[f"figure{figure}"])


def seg_table_recorded(preset_name, table):
    view = paper_preset(preset_name, SEG)
    return seg_targets.table_results(
        preset_name, view, experiment(SEG), f"table{table}"
    )


def seg_figure_recorded(preset_name, figure):
    lister = {"2": seg_targets.figure2_results, "3": seg_targets.figure3_results}
    return lister[figure](preset_name, paper_preset(preset_name, SEG), experiment(SEG))


def receptive_field_table_arguments(wildcards, input):
    """lenex.receptive_field.table's own arguments: evaluations, ERFs, corpus metas."""
    recorded = receptive_field_table_recorded(wildcards.preset, wildcards.table)
    spec = table_spec(RF, wildcards.table)
    return (
        f"--preset-file {input.preset_file} --results {' '.join(recorded['results'])}"
        f" --erf {' '.join(recorded['erf'])} --metas {' '.join(recorded['metas'])}"
        f" --corpora {quoted_json(config['corpora'])}"
        f" --unavailable {quoted_json(rf_targets.table_unavailable(spec, corpus_unavailable))}"
    )


def seg_view(wildcards):
    """The preset as the segmented paper sees it."""
    return paper_preset(wildcards.preset, SEG)


def seg_domain_data(wildcards):
    """The arXiv stand-in's prepared folder in the job's model's tokenizer."""
    return seg_targets.domain_data(
        wildcards.preset, seg_view(wildcards), wildcards.model
    )


def seg_domain_meta(wildcards):
    return seg_targets.domain_meta(
        wildcards.preset, seg_view(wildcards), wildcards.model
    )


def hf_flag(wildcards):
    """--hf where the preset's segmented models are the released checkpoints."""
    return "--hf" if seg_targets.uses_hf(seg_view(wildcards)) else ""


def segmented_table_arguments(wildcards):
    """lenex.segmented.tables' own arguments: evaluations, models and their L_t, the arXiv meta."""
    preset_file = CONFIG_DIR / "presets" / f"{wildcards.preset}.yaml"
    models = quoted_json(
        seg_targets.describe_models(seg_view(wildcards), experiment(SEG))
    )
    return (
        f"--results {' '.join(seg_table_recorded(wildcards.preset, wildcards.table))}"
        f" --preset-file {preset_file} --models {models}"
        f" --corpora {quoted_json(config['corpora'])}"
        f" --metas {data_files(wildcards.preset, 'arxiv')[-1]} {hf_flag(wildcards)}"
    )
