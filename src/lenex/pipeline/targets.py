"""What whole-paper targets gather: each paper's tables, figures and cells files, the corpus cards
and the inputs of rule all (Snakefile). A part of `lenex.pipeline.workflow.Pipeline`
(`pipeline.targets`). Each paper's own file lists (which models and evaluations a table reads) are
its `Paper`'s; these only name rendered files."""

from __future__ import annotations

import sys
from pathlib import Path

from ..claims.frozen import frozen_paths


def plan_pointer(preset_name: str, papers: list[str]) -> str:
    """The line a whole preset's run prints: where the plan page says what it costs before it runs."""
    pages = " ".join(f"results/{preset_name}/plan/{paper}.md" for paper in papers)
    return (f"lenex: what preset {preset_name!r} costs before it runs (CPU-hours at a CPU preset, from the cost "
            f"model; GPU-hours at a GPU one): snakemake --cores 1 {pages}")


def reference_folder(preset_name: str, paper: str) -> str:
    """Where a superseded table is rendered from the reference run's records alone (rule paper_table_reference)."""
    return f"results/{preset_name}/reruns/{paper}/reference/"


def reference_path(path: str, preset_name: str, paper: str) -> str:
    """A table's file (results/<preset>/tables/<paper>/...) as its reference rendering writes it."""
    tables = f"results/{preset_name}/tables/{paper}/"
    return reference_folder(preset_name, paper) + path.removeprefix(tables) if path.startswith(tables) else path


class Targets:
    """The rendered files of each configured paper, from the settings (its experiment file), the
    paths (which corpora build here) and the recorded part (raw results, `from_raw`)."""

    def __init__(self, settings, paths, recorded):
        self.settings, self.paths, self.recorded = settings, paths, recorded

    def corpus_cards(self, preset_name: str) -> list[str]:
        return [f"results/{preset_name}/data/{c}/CARD.md" for c in self.paths.available_corpora(preset_name)]

    def paper_tables(self, preset_name: str, paper: str) -> list[str]:
        """Every table of a paper at one preset: Markdown and LaTeX."""
        stems = [f"results/{preset_name}/tables/{paper}/{key}" for key in self.settings.experiment(paper)["tables"]]
        return [f"{stem}.{ext}" for stem in stems for ext in ("md", "tex")]

    def paper_figures(self, preset_name: str, paper: str) -> list[str]:
        """Every figure of a paper at one preset: PNG and PDF."""
        figures = self.settings.experiment(paper).get("figures", {})
        stems = [f"results/{preset_name}/figures/{paper}/{key}" for key in figures]
        return [f"{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]

    def paper_cells(self, preset_name: str, paper: str) -> list[str]:
        """The cells files of a paper at one preset (what its claims read): every table's, and
        those of the figures that carry numbers no table has."""
        tables = [f"results/{preset_name}/tables/{paper}/{key}.cells.json"
                  for key in self.settings.experiment(paper)["tables"]]
        return tables + [f"results/{preset_name}/figures/{paper}/{key}.cells.json"
                         for key in self.settings.paper(paper).figure_cells]

    def earlier_cells(self, preset_name: str, paper: str) -> list[str]:
        """Where committed re-runs supersede some tables' evaluations (Recorded.superseding): the cells
        files the claims' earlier side reads, those tables rendered from the reference run's records
        alone (rule paper_table_reference) in place of today's; none where nothing is superseded."""
        superseded = set(self.recorded.superseded_tables(preset_name, paper))
        if not superseded:
            return []
        tables = f"results/{preset_name}/tables/{paper}/"
        return [reference_path(f, preset_name, paper) if f.startswith(tables) and Path(f).name.split(".")[0] in superseded
                else f for f in self.paper_cells(preset_name, paper)]

    def reference_table_inputs(self, preset_name: str, paper: str, table: str) -> dict[str, str]:
        """A table's non-recorded inputs (its header ...) as its reference rendering reads them."""
        inputs = self.settings.paper(paper).table_inputs(self.paths, preset_name, table)
        return {name: reference_path(path, preset_name, paper) for name, path in inputs.items()}

    def reference_table_arguments(self, preset_name: str, paper: str, table: str) -> str:
        """The renderer's own arguments for a table's reference rendering: its header's path moved too."""
        arguments = self.settings.paper(paper).table_arguments(self.paths, preset_name, table)
        return arguments.replace(f"results/{preset_name}/tables/{paper}/", reference_folder(preset_name, paper))

    def plan_tables(self, preset_name: str, paper: str) -> list[str]:
        """What a paper's plan page costs (rule plan): its tables' Markdown."""
        return [f"results/{preset_name}/tables/{paper}/{key}.md" for key in self.settings.experiment(paper)["tables"]]

    def diagnostic_arguments(self, paper: str) -> str:
        """What lenex.tables.diagnostics is told of a paper's protocol (its `Paper`'s protocol and same_tokens)."""
        declared = self.settings.paper(paper)
        return f"--protocol {declared.protocol}" + (" --same-tokens" if declared.same_tokens else "")

    def paper_targets(self, preset_name: str, papers: list[str] | None = None) -> list[str]:
        """What is rendered from recorded results: each paper's whole-paper page (which gathers its
        tables and figures) and its claims, and the claims summary (of every configured paper, or of
        `papers`). Rules that read only rendered files or raw results and should come along with
        `make tables` are added here."""
        papers = [paper.name for paper in self.settings.papers()] if papers is None else papers
        if not papers:
            return []
        return ([f"results/{preset_name}/{paper}.md" for paper in papers]
                + [f"results/{preset_name}/claims/{paper}.json" for paper in papers]
                + [f"results/{preset_name}/claims.md"] + self.recorded.rerun_pages(preset_name, papers))

    def frozen_claims(self, preset_name: str, paper: str) -> list[str]:
        """The claims as they stood before a reference run's data (lenex.claims.frozen: the claims file
        and its rules record), which the claims rule evaluates beside today's; none where no snapshot
        was taken (no reference run). One file without the other is an error."""
        paths = list(frozen_paths(preset_name, paper))
        present = [Path(p).is_file() for p in paths]
        if any(present) and not all(present):
            raise ValueError(f"{paths[present.index(False)]} is missing beside {paths[present.index(True)]}: "
                             f"run python -m lenex.claims.frozen snapshot --preset {preset_name} --paper {paper}")
        return paths if all(present) else []

    def claims_summary_inputs(self, preset_name: str) -> list[str]:
        """What the claims summary reads: the claims of every paper rendered at the preset."""
        return [f"results/{preset_name}/claims/{paper}.json" for paper in self.recorded.rendered_papers(preset_name)]

    def rendered_from_raw(self, preset_name: str):
        """The input of `all` under from_raw, checked only when `all` is built: what is rendered
        from the raw results there are; the papers without any are named on stderr."""

        def inputs(wildcards):
            papers = self.recorded.rendered_papers(preset_name)
            missing = [p.name for p in self.settings.papers() if p.name not in papers]
            if missing:
                print(f"lenex: from_raw: no raw results of {', '.join(missing)} at preset {preset_name!r} "
                      f"(not run there yet; a run writes them, rule raw_results): "
                      + (f"re-rendering {', '.join(papers)} only" if papers else "nothing to render"), file=sys.stderr)
            return self.paper_targets(preset_name, papers)

        return inputs

    def all_targets(self, preset_name: str):
        """Every corpus card, the whole-paper page and the raw results of every configured paper;
        under from_raw only what is rendered from the raw results."""
        if self.settings.from_raw:
            return self.rendered_from_raw(preset_name)
        return (self.corpus_cards(preset_name) + self.paper_targets(preset_name)
                + self.recorded.raw_files(preset_name))

    def all_inputs(self, preset_name: str):
        """Rule all's input function: `all_targets`, and (only when `all` is in the DAG, e.g. a dry
        run of the whole preset) one line saying where the plan page tells what it costs."""
        targets = self.all_targets(preset_name)

        def inputs(wildcards):
            if not self.settings.from_raw:
                print(plan_pointer(preset_name, [paper.name for paper in self.settings.papers()]), file=sys.stderr)
            return targets(wildcards) if callable(targets) else targets

        return inputs
