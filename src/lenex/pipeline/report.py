"""What the Snakemake report of a preset shows and how it labels it (rules in report.smk, figures
flagged where their rules write them): a part of `lenex.pipeline.workflow.Pipeline`
(`pipeline.report`), reading each paper's experiment file (titles) and the preset's corpora."""

from __future__ import annotations

from pathlib import Path


class Report:
    """The report's categories and labels, and its contents: what exists under results/<preset>/."""

    def __init__(self, settings, paths):
        self.settings, self.paths = settings, paths

    def paper_title(self, paper: str) -> str:
        return self.settings.experiment(paper)["title"]

    def result_label(self, paper: str, kind: str, key: str) -> str:
        """'Table 2: <title>' from the experiment file, the report's label of one table or figure."""
        number = key.removeprefix(kind)
        return f"{kind.capitalize()} {number}: {self.settings.experiment(paper)[f'{kind}s'][key]['title']}"

    def diagnostics_report(self, figure: str = "diagnostics", label: str = "loss by position (ours)") -> dict:
        """Snakemake's report() options of one of a paper's diagnostics figures (rule
        paper_diagnostics): its loss by position (`diagnostics`) or its training curves (`curves`)."""
        return {
            "caption": f"../report/{figure}.rst",
            "category": lambda wc: self.paper_title(wc.paper),
            "subcategory": "Diagnostics",
            "labels": lambda wc: {"diagnostics": label},
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
        for paper in (p.name for p in self.settings.papers()):
            experiment = self.settings.experiment(paper)
            for key in experiment["tables"]:
                if Path(f"{root}/tables/{paper}/{key}.md").exists():
                    files.append(f"{root}/report/tables/{paper}/{key}.html")
            for key in experiment.get("figures", {}):
                if Path(f"{root}/figures/{paper}/{key}.png").exists():
                    files.append(f"{root}/figures/{paper}/{key}.png")
            for diagnostic in (f"{root}/diagnostics/{paper}.png", f"{root}/diagnostics/{paper}.curves.png"):
                if Path(diagnostic).exists():
                    files.append(diagnostic)
            if Path(f"{root}/claims/{paper}.md").exists():
                files.append(f"{root}/report/claims/{paper}.html")
        for corpus in self.paths.corpora(preset_name):
            if Path(f"{root}/data/{corpus}/CARD.md").exists():
                files.append(f"{root}/report/data/{corpus}.html")
        return files
