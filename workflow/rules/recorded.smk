# Raw results (docs/raw-results.md): which recorded files (evaluations, corpus metas) each
# paper's render rules read, and how a render job is pointed at them or, under from_raw, at the
# raw results that hold them. Functions only; included right after common.smk.


def raw_file(preset_name, paper):
    return f"results/{preset_name}/raw/{paper}.jsonl"


def raw_files(preset_name):
    return [raw_file(preset_name, paper) for paper in config["papers"]]


def rendered_from_raw(preset_name):
    """The input of `all` under from_raw, checked only when `all` is built. It is what is
    rendered from the raw results, which must all be there."""

    def inputs(wildcards):
        missing = [p for p in raw_files(preset_name) if not Path(p).exists()]
        if missing:
            raise ValueError(
                f"from_raw: no raw results for preset {preset_name!r}: missing {', '.join(missing)}; "
                "a run of the pipeline at that preset writes them (rule raw_results)"
            )
        return paper_targets(preset_name)

    return inputs


def recorded(paths, paper=None):
    """Input function of a render job for recorded files (evaluations, corpus metas), giving
    those `paths(wildcards)` names or, under from_raw, the raw results that hold them.
    """

    def inputs(wildcards):
        if FROM_RAW:
            return raw_file(wildcards.preset, paper or wildcards.paper)
        return paths(wildcards)

    return inputs


def raw_env(paper=None):
    """Shell prefix of a render rule: under from_raw, LENEX_RAW names the raw results that
    lenex.tables.raw_results.read_recorded serves the recorded files from."""

    def prefix(wildcards):
        if not FROM_RAW:
            return ""
        return f"LENEX_RAW={raw_file(wildcards.preset, paper or wildcards.paper)} "

    return prefix


def paper_recorded(preset_name, paper):
    """Every recorded file the tables and figures of one paper read: its raw results."""
    spec = experiment(paper)
    tables = [key[len("table") :] for key in spec["tables"]]
    figures = [key[len("figure") :] for key in spec.get("figures", {})]
    if (
        paper == LEX
    ):  # Figure 1 reads Table 2's; the header reads the training corpus's meta
        files = [train_meta(preset_name, LEX)]
        files += [
            p
            for t in tables
            for ps in lex_table_recorded(preset_name, t).values()
            for p in ps
        ]
    elif paper == RF:
        files = [
            p
            for t in tables
            for ps in receptive_field_table_recorded(preset_name, t).values()
            for p in ps
        ]
        files += [
            p for f in figures for p in receptive_field_figure_recorded(preset_name, f)
        ]
    elif paper == SEG:
        files = [data_files(preset_name, "arxiv")[-1]]
        files += [p for t in tables for p in seg_table_recorded(preset_name, t)]
        files += [p for f in figures for p in seg_figure_recorded(preset_name, f)]
    else:
        raise ValueError(f"no raw results are defined for paper {paper!r}")
    return sorted(set(files))
