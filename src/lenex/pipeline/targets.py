"""What whole-paper targets gather: each paper's tables, figures and cells files, the corpus
cards, the inputs of rule all (Snakefile), and what the Snakemake report of a preset shows. Each
paper's own file lists (which models and evaluations a table reads) are its `Paper`'s; these only
name rendered files. A mixin of `lenex.pipeline.workflow.Pipeline`."""

from __future__ import annotations

import sys

from pathlib import Path


def plan_pointer(preset_name: str, papers: list[str]) -> str:
    """The line a whole preset's run prints: where the plan page says what it costs before it runs."""
    pages = " ".join(f"results/{preset_name}/plan/{paper}.md" for paper in papers)
    return (f"lenex: what preset {preset_name!r} costs before it runs (CPU-hours at a CPU preset, from the cost "
            f"model; GPU-hours at a GPU one): snakemake --cores 1 {pages}")


class Targets:
    def corpus_cards(self, preset_name: str) -> list[str]:
        return [f"results/{preset_name}/data/{c}/CARD.md" for c in self.available_corpora(preset_name)]

    def paper_tables(self, preset_name: str, paper: str) -> list[str]:
        """Every table of a paper at one preset: Markdown and LaTeX."""
        stems = [f"results/{preset_name}/tables/{paper}/{key}" for key in self.experiment(paper)["tables"]]
        return [f"{stem}.{ext}" for stem in stems for ext in ("md", "tex")]

    def paper_figures(self, preset_name: str, paper: str) -> list[str]:
        """Every figure of a paper at one preset: PNG and PDF."""
        stems = [f"results/{preset_name}/figures/{paper}/{key}" for key in self.experiment(paper).get("figures", {})]
        return [f"{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]

    def paper_cells(self, preset_name: str, paper: str) -> list[str]:
        """The cells files of a paper at one preset (what its claims read): every table's, and
        those of the figures that carry numbers no table has."""
        tables = [f"results/{preset_name}/tables/{paper}/{key}.cells.json" for key in self.experiment(paper)["tables"]]
        return tables + [f"results/{preset_name}/figures/{paper}/{key}.cells.json"
                         for key in self.paper(paper).figure_cells]

    def diagnostic_arguments(self, paper: str) -> str:
        """What lenex.tables.diagnostics is told of a paper's protocol (its `Paper`'s protocol and same_tokens)."""
        declared = self.paper(paper)
        return f"--protocol {declared.protocol}" + (" --same-tokens" if declared.same_tokens else "")

    def paper_targets(self, preset_name: str, papers: list[str] | None = None) -> list[str]:
        """What is rendered from recorded results: each paper's whole-paper page (which gathers its
        tables and figures) and its claims, and the claims summary (of every configured paper, or of
        `papers`). Rules that read only rendered files or raw results and should come along with
        `make tables` are added here."""
        papers = [paper.name for paper in self.papers()] if papers is None else papers
        if not papers:
            return []
        return ([f"results/{preset_name}/{paper}.md" for paper in papers]
                + [f"results/{preset_name}/claims/{paper}.json" for paper in papers]
                + [f"results/{preset_name}/claims.md"])

    def all_targets(self, preset_name: str):
        """Every corpus card, the whole-paper page and the raw results of every configured paper;
        under from_raw only what is rendered from the raw results."""
        if self.from_raw:
            return self.rendered_from_raw(preset_name)
        return self.corpus_cards(preset_name) + self.paper_targets(preset_name) + self.raw_files(preset_name)

    def all_inputs(self, preset_name: str):
        """Rule all's input function: `all_targets`, and (only when `all` is in the DAG, e.g. a dry
        run of the whole preset) one line saying where the plan page tells what it costs."""
        targets = self.all_targets(preset_name)

        def inputs(wildcards):
            if not self.from_raw:
                print(plan_pointer(preset_name, [paper.name for paper in self.papers()]), file=sys.stderr)
            return targets(wildcards) if callable(targets) else targets

        return inputs

    # -- the Snakemake report (rules in report.smk) -------------------------------------------
    def paper_title(self, paper: str) -> str:
        return self.experiment(paper)["title"]

    def result_label(self, paper: str, kind: str, key: str) -> str:
        """'Table 2: <title>' from the experiment file, the report's label of one table or figure."""
        number = key.removeprefix(kind)
        return f"{kind.capitalize()} {number}: {self.experiment(paper)[f'{kind}s'][key]['title']}"

    def diagnostics_report(self) -> dict:
        """Snakemake's report() options of a paper's diagnostics figure (rule paper_diagnostics)."""
        return {
            "caption": "../report/diagnostics.rst",
            "category": lambda wc: self.paper_title(wc.paper),
            "subcategory": "Diagnostics",
            "labels": lambda wc: {"diagnostics": "loss by position (ours)"},
        }

    def figure_report(self, path: str, paper: str) -> dict:
        """Snakemake's report() options of a figure output: under its paper's Figures, labelled with
        its title. `path` names its figure literally (figure1) or through the wildcard {figure}."""
        stem = Path(path).stem
        return {
            "caption": "../report/figure.rst",
            "category": self.paper_title(paper),
            "subcategory": "Figures",
            "labels": lambda wc: {
                "figure": self.result_label(paper, "figure", stem.replace("{figure}", getattr(wc, "figure", "")))
            },
        }

    def report_files(self, preset_name: str) -> list[str]:
        """What the report of a preset shows: each table, figure, claims page and dataset card whose
        source exists (the report is built from what exists and reruns nothing)."""
        root = f"results/{preset_name}"
        files = []
        for paper in (p.name for p in self.papers()):
            for key in self.experiment(paper)["tables"]:
                if Path(f"{root}/tables/{paper}/{key}.md").exists():
                    files.append(f"{root}/report/tables/{paper}/{key}.html")
            for key in self.experiment(paper).get("figures", {}):
                if Path(f"{root}/figures/{paper}/{key}.png").exists():
                    files.append(f"{root}/figures/{paper}/{key}.png")
            if Path(f"{root}/diagnostics/{paper}.png").exists():
                files.append(f"{root}/diagnostics/{paper}.png")
            if Path(f"{root}/claims/{paper}.md").exists():
                files.append(f"{root}/report/claims/{paper}.html")
        for corpus in self.corpora(preset_name):
            if Path(f"{root}/data/{corpus}/CARD.md").exists():
                files.append(f"{root}/report/data/{corpus}.html")
        return files
