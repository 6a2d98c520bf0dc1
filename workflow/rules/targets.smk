# What whole-paper targets gather: each paper's tables, figures and cells files, the corpus
# cards, and the inputs of rule all (Snakefile). Each paper's own file lists (which models and
# evaluations a table reads) are lenex.<paper>.targets; these only name rendered files.
from lenex.claims import FIGURE_CELLS


def corpus_cards(preset_name):
    return [f"results/{preset_name}/data/{c}/CARD.md" for c in available_corpora()]


def paper_tables(preset_name, paper):
    """Every table of a paper at one preset: Markdown and LaTeX."""
    stems = [
        f"results/{preset_name}/tables/{paper}/{key}"
        for key in experiment(paper)["tables"]
    ]
    return [f"{stem}.{ext}" for stem in stems for ext in ("md", "tex")]


def paper_figures(preset_name, paper):
    """Every figure of a paper at one preset: PNG and PDF."""
    stems = [
        f"results/{preset_name}/figures/{paper}/{key}"
        for key in experiment(paper).get("figures", {})
    ]
    return [f"{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]


def paper_cells(preset_name, paper):
    """The cells files of a paper at one preset (what its claims read): every table's, and
    the figures' that carry numbers no table has."""
    tables = [
        f"results/{preset_name}/tables/{paper}/{key}.cells.json"
        for key in experiment(paper)["tables"]
    ]
    return tables + [
        f"results/{preset_name}/figures/{paper}/{key}.cells.json"
        for key in FIGURE_CELLS.get(paper, [])
    ]


def paper_targets(preset_name):
    """What is rendered from recorded results: each configured paper's whole-paper page (which
    gathers its tables and figures) and its claims, and the claims summary. Rules that read only
    rendered files or raw results and should come along with `make tables` are added here.
    """
    papers = config["papers"]
    return (
        [f"results/{preset_name}/{paper}.md" for paper in papers]
        + [f"results/{preset_name}/claims/{paper}.json" for paper in papers]
        + [f"results/{preset_name}/claims.md"]
    )


def all_targets(preset_name):
    """Every corpus card, the whole-paper page and the raw results of every configured paper;
    under from_raw only what is rendered from the raw results."""
    if FROM_RAW:
        return rendered_from_raw(preset_name)
    return (
        corpus_cards(preset_name) + paper_targets(preset_name) + raw_files(preset_name)
    )
