"""Raw results (docs/raw-results.md): which recorded files (evaluations, corpus metas) each paper's
render rules read, and how a render job is pointed at them or, under `from_raw`, at the raw
results that hold them. A part of `lenex.pipeline.workflow.Pipeline` (`pipeline.recorded`): it asks
each paper for its files (lenex.pipeline.papers.Paper.recorded), giving it the paths."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..experiment.presets import reference_parts
from ..records.stored import SUFFIX, existing
from ..tables.raw_results import RAW_ENV, check_collected, raw_env_value
from .specs import curve_path
from .user_errors import refuse


def recorded_in_part(files: list[str], parts: dict[str, list[str]], part: str) -> list[str]:
    """The recorded files of one part of a reference run made in recorded parts. A part is a list
    of selectors, each one or more path segments joined by '/' (a corpus: `arxiv`; a corpus's
    seeds: `arxiv/seed1`; a corpus's own files: `data/arxiv`; one model's seed:
    `arxiv/window-40/seed4`); a file lies in a part when every segment of one of its selectors is a
    segment of the file's path, and where selectors of several parts select it, in the part of the
    one with the most segments (a power rerun's `arxiv/window-40/seed4` before `arxiv/seed4`). Every
    file must lie in exactly one part, so that the parts' raw results together are the paper's,
    each file once."""
    if part not in parts:
        raise ValueError(f"no reference part {part!r}; declared: {', '.join(parts) or 'none'}")

    def specificity(selectors: list[str], path: str) -> int:
        segments = set(Path(path).parts)
        return max((len(s.split("/")) for s in selectors if set(s.split("/")) <= segments), default=0)

    def owners_of(path: str) -> list[str]:
        scores = {name: specificity(selectors, path) for name, selectors in parts.items()}
        best = max(scores.values(), default=0)
        return [name for name, score in scores.items() if score and score == best]

    owners = {f: owners_of(f) for f in files}
    orphans = [f for f, names in owners.items() if not names]
    shared = [f for f, names in owners.items() if len(names) > 1]
    if orphans or shared:
        what = (f"{orphans[0]} lies in no part" if orphans else f"{shared[0]} lies in parts {owners[shared[0]]}")
        raise ValueError(f"reference parts {parts}: every recorded file must lie in exactly one part; {what}")
    return [f for f in files if owners[f] == [part]]


def rerun_seeds(seeds: str) -> list[int]:
    """The seeds a table's re-run names in its path, `<first>-<last>` (`1-3`: seeds 1, 2 and 3)."""
    match = re.fullmatch(r"(\d+)-(\d+)", seeds)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"a re-run's seeds are written <first>-<last> with 1 <= first <= last, got {seeds!r}")
    return list(range(int(match[1]), int(match[2]) + 1))


def of_seeds(files: list[str], seeds: list[int]) -> list[str]:
    """The files of models with these seeds: those with a path segment `seed<s>` for one of them."""
    wanted = {f"seed{s}" for s in seeds}
    return [f for f in files if wanted & set(Path(f).parts)]


class Recorded:
    """Each paper's recorded files and raw results, from the settings (the configured papers,
    `from_raw`) and the papers' file lists over the paths."""

    def __init__(self, settings, paths, specs=None):
        self.settings, self.paths, self.specs = settings, paths, specs
        self._superseding: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._overlaid: dict[tuple[str, str], set[str]] = {}

    def raw_file(self, preset_name: str, paper: str) -> str:
        """A paper's raw results made in one go (rule raw_results; `paper` may name a part)."""
        return f"results/{preset_name}/raw/{paper}.jsonl"

    def part_file(self, preset_name: str, paper: str, part: str) -> str:
        """One recorded part's raw results (rule raw_results_part), stored compressed: committed as written."""
        return self.raw_file(preset_name, f"{paper}.part-{part}") + SUFFIX

    def stored_raw(self, preset_name: str, paper: str) -> list[str]:
        """The raw-results files a paper is rendered from under from_raw: its whole-run file where
        one is there (plain or .xz), else, for a reference run made in recorded parts, every declared
        part's file (each record is stored once, in its part; they are read together, what `merge`
        would join); else the whole-run file a run would write."""
        whole = self.raw_file(preset_name, paper)
        found = existing(whole)
        if found:
            return [found]
        # A preset with no file (from_raw renders what raw results there are) declares no parts.
        configured = (self.settings.config_dir / "presets" / f"{preset_name}.yaml").is_file()
        parts = reference_parts(self.settings.paper_preset(preset_name, paper)) if configured else {}
        if parts:
            # A part is written compressed; one written plain by an older revision is read as it is.
            return [existing(plain, compressed_first=True) or plain + SUFFIX
                    for plain in (self.raw_file(preset_name, f"{paper}.part-{name}") for name in parts)]
        return [whole]

    def raw_files(self, preset_name: str) -> list[str]:
        return [self.raw_file(preset_name, paper.name) for paper in self.settings.papers()]

    def part_recorded(self, preset_name: str, paper: str, part: str) -> list[str]:
        """The recorded files of one part of a paper's reference run (the preset's
        `papers.<paper>.reference_parts`): rule raw_results_part's inputs."""
        parts = reference_parts(self.settings.paper_preset(preset_name, paper))
        return recorded_in_part(self.paper_recorded(preset_name, paper), parts, part)

    def raw_inputs(self, preset_name: str, paper: str, part: str | None = None) -> list[str]:
        """Rule raw_results' (raw_results_part's) input files, once the raw results already there
        are checked against them: an edited raw line, or one that differs from its evaluation file,
        stops the run naming both (Snakemake alone would keep it: it is newer than its inputs)."""
        raw = self.part_file(preset_name, paper, part) if part else self.raw_file(preset_name, paper)
        try:
            check_collected(raw)
        except ValueError as err:
            refuse(str(err))
        return self.part_recorded(preset_name, paper, part) if part else self.paper_recorded(preset_name, paper)

    def paper_recorded(self, preset_name: str, paper: str) -> list[str]:
        """Every recorded file the tables, figures and headers of one paper read, and its models'
        training curves (`curve_files`): its raw results."""
        return sorted(set(self.settings.paper(paper).recorded(self.paths, preset_name))
                      | set(self.curve_files(preset_name, paper)))

    def curve_files(self, preset_name: str, paper: str) -> list[str]:
        """The training curves (results/<preset>/curves/<paper>/<model>/curve.json, written by rule train)
        of the models a paper's diagnostics' evaluations score (Paper.trained_models). In a normal run,
        only those of models whose trainer writes the metrics a curve reads (ModelSpec.records_curve:
        lenex's own); under from_raw every one, as a path its raw results may or may not hold (a run
        recorded before curves holds none: its page says so)."""
        models = self.settings.paper(paper).trained_models(self.paths, preset_name)
        if not self.settings.from_raw and self.specs is not None:
            models = [m for m in models if self.specs.model(preset_name, paper, m).records_curve]
        return [curve_path(f"results/{preset_name}/models/{paper}/{m}.pt") for m in models]

    def rerun_recorded(self, preset_name: str, paper: str, table, seeds: str) -> list[str]:
        """What a re-run of one table's cells for some seeds records (rule table_rerun): the table's
        results of those seeds, its corpus metas, the meta of the corpus its models trained on and
        their training curves, so the re-run is judged against the committed run on its own raw
        results (lenex.tables.rerun pairs the models by what both training metas record)."""
        groups = self.settings.paper(paper).table_recorded(self.paths, preset_name, str(table))
        chosen = rerun_seeds(seeds)
        results = of_seeds(groups.get("results", []), chosen)
        others = [f for role, group in groups.items() if role != "results" for f in group]
        layout = re.compile(rf"results/{re.escape(preset_name)}/[^/]+/{re.escape(paper)}/"
                            rf"(?P<model>{self.settings.paper(paper).model_layout})/")
        models = sorted({m["model"] for f in results if (m := layout.match(f))})
        curves = [curve_path(f"results/{preset_name}/models/{paper}/{m}.pt") for m in models]
        return sorted(set(results) | set(others) | set(curves) | {self.paths.train_meta(preset_name, paper)})

    def rerun_beside(self, preset_name: str, paper: str, table, seeds: str, kind: str) -> list[str]:
        """A file committed beside a table re-run's raw results, where there is one: its run record
        (`kind` "run", lenex.pipeline.reference_record --record) or the check that scores its models
        by the committed rule (`kind` "reproduce", lenex.scoring.reproduce)."""
        if kind not in ("run", "reproduce"):
            raise ValueError(f"a re-run keeps a run record or a reproduce check beside it, not {kind!r}")
        found = Path(f"results/{preset_name}/reruns/{paper}/table{table}.seeds{seeds}.{kind}.json")
        return [str(found)] if found.is_file() else []

    def rerun_pages(self, preset_name: str, papers: list[str]) -> list[str]:
        """The page of every committed re-run of these papers' tables (rule table_rerun_page)."""
        root = Path(f"results/{preset_name}/reruns")
        found = [p for paper in papers for p in sorted((root / paper).glob(f"table*.seeds*{SUFFIX}"))]
        return [str(p)[: -len(SUFFIX)].removesuffix(".jsonl") + ".md" for p in found]

    def table_reruns(self, preset_name: str, paper: str, table) -> dict[str, list[int]]:
        """The committed re-runs of one table (rule table_rerun's raw results) -> the seeds each holds."""
        prefix, suffix = f"table{table}.seeds", f".jsonl{SUFFIX}"
        found = Path(f"results/{preset_name}/reruns/{paper}").glob(f"{prefix}*{suffix}")
        runs = {str(p): rerun_seeds(p.name.removeprefix(prefix).removesuffix(suffix)) for p in found}
        return dict(sorted(runs.items(), key=lambda item: item[1]))

    def superseding(self, preset_name: str, paper: str) -> dict[str, list[str]]:
        """Under from_raw, table -> its re-runs, for every table whose committed re-runs hold every seed
        its results read: their evaluations (and models' curves) are read in place of the reference
        run's at the same paths, by every renderer of the paper (read_raw's `over`), and the claims
        judged on them list beside them the verdicts the reference run's records give (rule
        paper_table_reference). A table re-run for some of its seeds only is not read: its rows would
        mix two runs' scoring; its re-run's page compares it with the committed run."""
        if not self.settings.from_raw:
            return {}
        key = (preset_name, paper)
        if key not in self._superseding:
            out = {}
            for table in self.settings.experiment(paper)["tables"]:
                number = table.removeprefix("table")
                reruns = self.table_reruns(preset_name, paper, number)
                covered = sorted({s for seeds in reruns.values() for s in seeds})
                results = self.table_results(preset_name, paper, number)
                if reruns and results and set(of_seeds(results, covered)) == set(results):
                    out[number] = list(reruns)
            self._superseding[key] = out
        return self._superseding[key]

    def table_results(self, preset_name: str, paper: str, table: str) -> list[str]:
        return self.settings.paper(paper).table_recorded(self.paths, preset_name, table).get("results", [])

    def overlaid_results(self, preset_name: str, paper: str) -> set[str]:
        """The result files the superseding re-runs hold (every seed of their tables); asked by every
        render job's input function, so computed once."""
        key = (preset_name, paper)
        if key not in self._overlaid:
            self._overlaid[key] = {f for table in self.superseding(preset_name, paper)
                                   for f in self.table_results(preset_name, paper, table)}
        return self._overlaid[key]

    def reads_reruns(self, preset_name: str, paper: str, files: list[str]) -> bool:
        """Whether a render job reading `files` reads the superseding re-runs: every result it reads is
        one they hold (a table re-run whole, a figure drawn from its cells). A job that reads others too
        (an ablation table whose causal rows are the re-run table's) reads the reference run's records
        alone: its rows would otherwise set one run's models and scoring against another's."""
        overlaid = self.overlaid_results(preset_name, paper)
        results = [f for f in files if Path(f).name != "meta.json" and "/curves/" not in f]
        return bool(overlaid) and bool(results) and set(results) <= overlaid

    def superseded_tables(self, preset_name: str, paper: str) -> list[str]:
        """Every table of the paper (its key, `table2`) rendered from the superseding re-runs
        (`reads_reruns`): the tables whose cells the claims' earlier side reads from the reference
        run's records. A figure whose cells the claims read must not read the re-runs (refused)."""
        if not self.overlaid_results(preset_name, paper):
            return []
        declared = self.settings.paper(paper)
        out = [t for t in self.settings.experiment(paper)["tables"]
               if self.reads_reruns(preset_name, paper, self.table_recorded(paper, preset_name, t.removeprefix("table")))]
        for figure in declared.figure_cells:
            if self.reads_reruns(preset_name, paper, declared.figure_recorded(self.paths, preset_name, figure.removeprefix("figure"))):
                refuse(f"{paper} {figure}'s cells read results a re-run supersedes; the claims' earlier side renders "
                       "tables only from the reference run's records: render the figure there too before it is read")
        return out

    def table_recorded(self, paper: str, preset_name: str, table) -> list[str]:
        """Every recorded file one table's job reads."""
        groups = self.settings.paper(paper).table_recorded(self.paths, preset_name, str(table))
        return [path for group in groups.values() for path in group]

    def inputs(self, listed, paper: str | None = None, reference: bool = False):
        """Input function of a render job for recorded files: those `listed(wildcards)` names or,
        under from_raw, the raw results that hold them (the job's {paper}, or `paper`), with the
        superseding re-runs where the job reads them (`reads_reruns`; `reference`: never)."""

        def files(wildcards):
            if self.settings.from_raw:
                stored = self.raw_read(wildcards.preset, paper or wildcards.paper, listed(wildcards), reference)
                return stored[0] if len(stored) == 1 else stored
            return listed(wildcards)

        return files

    def raw_read(self, preset_name: str, paper: str, files: list[str] | None, reference: bool = False) -> list[str]:
        """The raw results a render job reading `files` (None: not said) reads under from_raw."""
        over = [] if reference or files is None else self.overlays(preset_name, paper, files)
        return self.stored_raw(preset_name, paper) + over

    def overlays(self, preset_name: str, paper: str, files: list[str]) -> list[str]:
        """The re-runs laid over a paper's raw results for a job reading `files` (`reads_reruns`)."""
        if not self.reads_reruns(preset_name, paper, files):
            return []
        return [r for reruns in self.superseding(preset_name, paper).values() for r in reruns]

    def raw_env(self, paper: str | None = None, listed=None, reference: bool = False):
        """Params function, the shell prefix of a render rule: under from_raw, LENEX_RAW names the
        raw results that lenex.tables.raw_results.read_recorded serves the recorded files from, with
        the superseding re-runs laid over them where the job reads them (`listed(wildcards)`: the
        recorded files it reads, as for `inputs`; not given, or `reference`: the reference run's alone)."""

        def prefix(wildcards):
            if not self.settings.from_raw:
                return ""
            name = paper or wildcards.paper
            over = [] if reference or listed is None else self.overlays(wildcards.preset, name, listed(wildcards))
            return f"{RAW_ENV}={shlex.quote(raw_env_value(self.stored_raw(wildcards.preset, name), over))} "

        return prefix

    def rendered_papers(self, preset_name: str) -> list[str]:
        """The papers whose pages and claims a run makes at a preset: every configured one, or under
        from_raw those whose raw results exist (a preset whose reference runs are not all made
        yet re-renders the papers it has run, and only those)."""
        names = [paper.name for paper in self.settings.papers()]
        if not self.settings.from_raw:
            return names
        return [name for name in names if all(Path(raw).is_file() for raw in self.stored_raw(preset_name, name))]
