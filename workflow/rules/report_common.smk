# Helpers of the Snakemake report (rules in report.smk): categories, labels, flagged figures and
# what the report of a preset shows. Included before the rule files that call reported_figure.


def paper_title(paper):
    return experiment(paper)["title"]


def result_label(paper, kind, key):
    """'Table 2: <title>' from the experiment file, the report's label for one table or figure."""
    number = key.removeprefix(kind)
    return (
        f"{kind.capitalize()} {number}: {experiment(paper)[f'{kind}s'][key]['title']}"
    )


def reported_figure(path, paper):
    """A figure output flagged for the report, under its paper's Figures, labelled with its title.
    `path` names its figure literally (figure1) or through the wildcard {figure}."""
    stem = Path(path).stem
    return report(
        path,
        caption="../report/figure.rst",
        category=paper_title(paper),
        subcategory="Figures",
        labels=lambda wc: {
            "figure": result_label(
                paper, "figure", stem.replace("{figure}", getattr(wc, "figure", ""))
            )
        },
    )


def report_files(preset_name):
    """What the report of a preset shows: each table, figure, claims page and dataset card whose
    source exists (the report is built from what exists and reruns nothing)."""
    root = f"results/{preset_name}"
    files = []
    for paper in config["papers"]:
        for key in experiment(paper)["tables"]:
            if Path(f"{root}/tables/{paper}/{key}.md").exists():
                files.append(f"{root}/report/tables/{paper}/{key}.html")
        for key in experiment(paper).get("figures", {}):
            if Path(f"{root}/figures/{paper}/{key}.png").exists():
                files.append(f"{root}/figures/{paper}/{key}.png")
        if Path(f"{root}/claims/{paper}.md").exists():
            files.append(f"{root}/report/claims/{paper}.html")
    for corpus in config["corpora"]:
        if Path(f"{root}/data/{corpus}/CARD.md").exists():
            files.append(f"{root}/report/data/{corpus}.html")
    return files
