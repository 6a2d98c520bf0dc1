"""Render a paper-vs-ours table to markdown and LaTeX, and the CLI the workflow calls.

    python -m lenex.tables.render --spec config/experiments/lex.yaml --table-key table2 \
        --results r1.json r2.json --header header.json --out-md t.md --out-tex t.tex [--out-cells t.cells.json]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import jinja2

from ..cli import run_cli
from ..files import atomic_write_text, read_yaml
from ..records.provenance import check_result_models, check_result_paths
from .cells import write_cells
from .raw_results import read_recorded
from ..experiment.schemes import with_extra_schemes
from .formatting import md_escape, multiple_md, multiple_tex, tex_escape
from .paper_results import load_paper_results
from .table_data import TableData, build_table

__all__ = ["build_table", "render_markdown", "render_latex", "load_table_spec", "load_experiment",
           "load_results", "add_table_arguments", "write_table", "main"]

_TEMPLATES = Path(__file__).parent / "templates"


def _environment(**delimiters) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_TEMPLATES),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, **delimiters)
    env.filters.update(md=md_escape, md_multiple=multiple_md,
                       tex=tex_escape, tex_multiple=multiple_tex)
    return env


def render_markdown(table: TableData) -> str:
    return _environment().get_template("table.md.j2").render(t=table)


def render_latex(table: TableData) -> str:
    # LaTeX is full of braces and '{#', so the LaTeX template uses ((( ))) / ((* *)) instead.
    env = _environment(block_start_string="((*", block_end_string="*))",
                       variable_start_string="(((", variable_end_string=")))",
                       comment_start_string="((=", comment_end_string="=))")
    return env.get_template("table.tex.j2").render(t=table)


def load_experiment(path: str | Path, extra_schemes: dict | None = None) -> dict:
    """An experiment YAML file, with the extra schemes (config `extra_schemes`) merged in."""
    experiment = read_yaml(path) or {}
    return with_extra_schemes(experiment, extra_schemes or {})


def load_table_spec(path: str | Path, key: str, extra_schemes: dict | None = None) -> dict:
    """The spec under ``tables.<key>`` of an experiment YAML file (with any extra schemes' rows)."""
    experiment = load_experiment(path, extra_schemes)
    tables = experiment.get("tables") or {}
    if key not in tables:
        known = ", ".join(sorted(tables)) or "(none)"
        raise KeyError(f"table key '{key}' not found in {path}; known table keys: {known}")
    return tables[key]


def load_results(paths: list[str | Path], experiment: dict | str | Path | None = None,
                 label: str = "variant", expect=None) -> list[dict]:
    """One evaluator JSON per file (a dict, or a list of dicts), or its raw results (LENEX_RAW).
    Given the experiment (or its file), a file whose model is not the one its cell names (its
    `label`: a variant of the experiment) is an error, never a row (lenex.records.provenance.check_result_models);
    given the job's `expect` (`--expect`), so is a file holding another path's result
    (lenex.records.provenance.check_result_paths)."""
    if isinstance(experiment, (str, Path)):
        experiment = load_experiment(experiment)
    results = []
    for path in paths:
        data = read_recorded(path)
        records = data if isinstance(data, list) else [data]
        if experiment is not None:
            check_result_models(records, path, experiment.get("variants") or {}, label)
        if expect:
            check_result_paths(records, path, expect)
        results.extend(records)
    return results


def _load_json(path: str | Path, what: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} {path} is not valid JSON: {err}") from err


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments every paper's table command takes (this module's, lenex.receptive_field.table's,
    lenex.segmented.tables')."""
    parser.add_argument("--spec", required=True, help="experiment YAML with a top-level 'tables'")
    parser.add_argument("--table-key", required=True, help="key under 'tables', e.g. table2")
    parser.add_argument("--extra-schemes", default="{}", help="JSON: config `extra_schemes` shown as rows")
    parser.add_argument("--results", nargs="*", default=[], help="evaluator JSON files")
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-tex", required=True)
    parser.add_argument("--out-cells", default=None, help="the cells as JSON (lenex.tables.cells)")
    parser.add_argument("--expect", default="{}", help="JSON: the labels every result records and the layouts of "
                        "the result paths (lenex.records.provenance.check_result_paths)")


def write_table(table: TableData, args: argparse.Namespace, md_tail: str = "", tex_tail: str = "",
                cells_extra: dict | None = None) -> None:
    """The table as markdown and LaTeX (each followed by its tail) and, when asked, its cells."""
    atomic_write_text(args.out_md, render_markdown(table) + md_tail)
    atomic_write_text(args.out_tex, render_latex(table) + tex_tail)
    if args.out_cells:
        write_cells(args.out_cells, table, cells_extra)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lenex.tables.render", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_table_arguments(parser)
    parser.add_argument("--header", required=True, help="JSON: preset, scale, stand-ins, ...")
    parser.add_argument("--paper-results", default=None, help="csv (default: packaged copy)")
    args = parser.parse_args(argv)
    extra = json.loads(args.extra_schemes)
    spec = load_table_spec(args.spec, args.table_key, extra)
    header = _load_json(args.header, "header file")
    results = load_results(args.results, load_experiment(args.spec, extra), expect=args.expect)
    table = build_table(spec, results, load_paper_results(args.paper_results), header)
    write_table(table, args)

if __name__ == "__main__":
    run_cli(main)
