"""Turn a table spec, our evaluation results and the papers' numbers into TableData.

No number is ever made up here: a cell without a matching result says so in words. Results of
several seeds of a model (records with a `seed`) make one cell, their mean ± sample std with each
seed's value (lenex.tables.seeds).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .formatting import format_delta, format_metric, human_count
from .paper_results import paper_details, paper_value_text
from .seeds import mean_over_seeds

OK, NOT_COMPUTED, NOT_COMPUTED_YET = "ok", "not computed", "not computed yet"
MISSING = "—"
# Header keys that feed the scale statement or the sections; everything else is listed as-is.
# Shown elsewhere (the scale statement, the section notes), not as header lines.
_SCALE_KEYS = {"preset", "n_layer", "d_model", "n_head", "train_length", "steps", "stand_ins",
               "unavailable"}
_LABELS = {"n_params": "Model size", "model_size": "Model size", "tokens_seen": "Tokens seen",
           "git_rev": "Git revision", "git_revision": "Git revision", "evaluations_from": "Evaluations",
           "scaled_scheme_options": "Scaled scheme options (docs/dimensions.md)"}
_PARAM_KEYS, _COUNT_KEYS = {"n_params", "model_size"}, {"tokens_seen"}


@dataclass
class Column:
    multiple: float
    paper_length: int
    our_length: int


@dataclass
class Cell:
    paper_text: str  # the paper's number as printed, or "—"
    ours_text: str   # our number, or "not computed" / "not computed yet"
    delta_text: str  # ours − paper with sign, or "—"
    status: str
    paper: float | None = None
    ours: float | None = None
    delta: float | None = None
    mask: str | None = None
    # Seed statistics and t-test marks (Table 3-like specs), kept apart from the printed text so the
    # cells file (lenex.tables.cells) can carry them as data: "better" / "worse" / None.
    ours_std: float | None = None
    n_seeds: int | None = None
    ours_mark: str | None = None
    paper_std: float | None = None
    paper_mark: str | None = None
    # What the claims' intervals need (lenex.claims): each seed's value of a mean over seeds, and the
    # per-piece NLLs of a single model's scored tokens ({unit, nll, tokens_sha256}); None when the
    # result records none (older results).
    ours_seeds: dict[str, float] | None = None
    ours_pieces: dict | None = None

    @property
    def text(self) -> str:
        return f"{self.paper_text} / {self.ours_text} / {self.delta_text}"


@dataclass
class Row:
    label: str
    method: str
    variant: str | None
    cells: list[Cell]


@dataclass
class Section:
    label: str
    dataset: str
    corpus: str | None
    stand_in: str | None
    rows: list[Row]


@dataclass
class TableData:
    title: str
    paper: str
    table: str
    metric: str
    scale_statement: str
    header_lines: list[tuple[str, str]]
    columns: list[Column]
    sections: list[Section] = field(default_factory=list)


def build_table(spec: dict, results: list[dict], paper_df, header: dict) -> TableData:
    metric = spec.get("metric", "ppl")
    results = mean_over_seeds(results, metric)
    train_length = _our_train_length(header, results)
    columns = [Column(float(c), round(c * spec["paper_train_length"]), round(c * train_length))
               for c in spec["columns"]]
    # Results of another training length (another preset) must never fill these cells; a row
    # may train at a multiple of the table's L_tr (optional `train_length_multiple`).
    allowed = {_row_train_length(r, train_length) for s in spec["sections"] for r in s["rows"]}
    own = [r for r in results if r.get("train_length", train_length) in allowed]
    table = TableData(title=spec.get("title", f"{spec['paper']} Table {spec['table']}"),
                      paper=str(spec["paper"]), table=str(spec["table"]), metric=metric,
                      scale_statement=scale_statement(header, spec),
                      header_lines=header_lines(header), columns=columns)
    stand_ins = header.get("stand_ins") or {}
    unavailable = header.get("unavailable") or {}
    for sec in spec["sections"]:
        corpus = sec.get("corpus")
        stand_in = next((stand_ins[k] for k in (sec["dataset"], corpus, sec.get("label"))
                         if k in stand_ins), None)
        if corpus in unavailable:  # this machine could not build the corpus: say why
            stand_in = f"not computed: {unavailable[corpus]}"
        rows = [Row(r["label"], r["method"], r.get("variant"),
                    [_cell(spec, sec, r, col, own, paper_df, train_length, metric, unavailable)
                     for col in columns])
                for r in sec["rows"]]
        table.sections.append(Section(sec.get("label", sec["dataset"]), sec["dataset"],
                                      corpus, stand_in, rows))
    return table


def _cell(spec, sec, row, col, results, paper_df, train_length, metric, unavailable) -> Cell:
    paper_text = paper_value_text(paper_df, spec["paper"], spec["table"], sec["dataset"],
                                  row["method"], col.paper_length, metric)
    paper = None if paper_text is None else float(paper_text)
    shown, paper_std, paper_mark = _paper_shown(spec, sec, row, col, paper_df, metric, paper_text)
    cell = _build_cell(spec, sec, row, col, results, train_length, metric, unavailable, shown, paper)
    cell.paper_std, cell.paper_mark = paper_std, paper_mark
    return cell


def _build_cell(spec, sec, row, col, results, train_length, metric, unavailable, shown, paper) -> Cell:
    if sec.get("corpus") is None:
        return Cell(shown, NOT_COMPUTED_YET, MISSING, NOT_COMPUTED_YET, paper)
    if sec["corpus"] in unavailable:
        return Cell(shown, NOT_COMPUTED, MISSING, NOT_COMPUTED, paper)
    mask = evaluation_mask(row, col.our_length, train_length)
    expected_train_length = _row_train_length(row, train_length)
    matches = [r for r in results if r.get("variant") == row.get("variant")
               and r.get("corpus") == sec["corpus"] and r.get("mask") == mask
               and r.get("length") == col.our_length and r.get(metric) is not None
               and r.get("train_length", train_length) == expected_train_length]
    values = {float(r[metric]) for r in matches}
    if not values:
        return Cell(shown, NOT_COMPUTED, MISSING, NOT_COMPUTED, paper, mask=mask)
    if len(values) > 1:
        # Two different numbers for one cell means a stale or mixed-up results set.
        raise ValueError(f"conflicting results for {row['variant']}/{sec['corpus']}/{mask}"
                         f"@{col.our_length}: {sorted(values)}")
    ours = values.pop()
    delta = None if paper is None else ours - paper
    cell = Cell(shown, format_metric(ours),
                MISSING if delta is None else format_delta(delta), OK, paper, ours, delta, mask)
    if matches[0].get("seeds") or spec.get("show_std") or spec.get("significance"):
        add_spread(cell, spec, matches[0], metric)
    return add_replication(cell, matches[0])


# Where each evaluator keeps its per-piece NLLs, and what a piece is (lenex.scoring.evaluate: spans of the
# table's longest length; the receptive-field last-token protocol: segments; segmented: pieces).
PIECE_FIELDS = {"span_nll": "span", "segment_nll": "segment", "piece_nll": "piece"}


def add_replication(cell: Cell, result: dict) -> Cell:
    """The cell with the per-seed values (`seed_values` of a mean over seeds,
    lenex.receptive_field.significance) and per-piece NLLs its result records, if any."""
    seeds = result.get("seed_values")
    if seeds:
        cell.ours_seeds = {str(k): float(v) for k, v in seeds.items()}
    for name, unit in PIECE_FIELDS.items():
        if result.get(name) is not None and result.get("scored_tokens_sha256"):
            cell.ours_pieces = {"unit": unit, "nll": list(result[name]), "tokens_sha256": result["scored_tokens_sha256"]}
    return cell


def evaluation_mask(row: dict, length: int, train_length: int) -> str | None:
    """The mask a table row is evaluated with at `length`: its `mask_beyond_train` (LEX: BCA)
    beyond L_tr, else its `mask`. The one rule for the table cells and for the evaluation files
    the workflow asks for (lenex.lex.targets)."""
    beyond = row.get("mask_beyond_train")
    return beyond if beyond and length > train_length else row.get("mask")


def _row_train_length(row: dict, train_length: int) -> int:
    return round(train_length * row.get("train_length_multiple", 1))


# A mean over seeds shows ± its std (the result's `<metric>_std`) unless the spec says `show_std:
# false`; `show_std: true` also shows the paper's std column. `significance` ({reference, better,
# worse}): markers from the result's `significance` and the paper's note, e.g. "sandwich
# significantly better ...".
def add_spread(cell: Cell, spec, result: dict, metric) -> None:
    markers = spec.get("significance") or {}
    std = result.get(f"{metric}_std")
    cell.ours_std, cell.n_seeds = std, len(result.get("seeds") or []) or None
    if markers:
        cell.ours_mark = result.get("significance") or None
    if spec.get("show_std", True) and std is not None:
        cell.ours_text += f" ± {format_metric(std)}"
    cell.ours_text += markers.get(result.get("significance") or "", "")


def _paper_shown(spec, sec, row, col, paper_df, metric, paper_text) -> tuple[str, float | None, str | None]:
    """The paper's cell as printed, with its std and t-test mark (None when it has none)."""
    if paper_text is None:
        return MISSING, None, None
    markers = spec.get("significance") or {}
    if not (spec.get("show_std") or markers):
        return paper_text, None, None
    details = paper_details(paper_df, spec["paper"], spec["table"], sec["dataset"], row["method"],
                            col.paper_length, metric)
    std = float(details["std"]) if details["std"] else None
    if spec.get("show_std") and details["std"]:
        paper_text += f" ± {details['std']}"
    note, mark = details["note"].lower(), None
    for outcome in ("better", "worse"):
        if outcome in markers and f"significantly {outcome}" in note:
            paper_text += markers[outcome]
            mark = outcome
    return paper_text, std, mark


def _our_train_length(header: dict, results: list[dict]) -> int:
    if header.get("train_length"):
        return int(header["train_length"])
    lengths = {r["train_length"] for r in results if "train_length" in r}
    if len(lengths) != 1:
        raise ValueError("header has no train_length and the results do not agree on one: "
                         f"{sorted(lengths)}")
    return int(lengths.pop())


def _architecture(d: dict) -> list[str]:
    parts = []
    if d.get("n_layer") and d.get("d_model"):
        parts.append(f"{d['n_layer']} layers × {d['d_model']} wide")
    if d.get("n_head"):
        parts.append(f"{d['n_head']} heads")
    if d.get("train_length"):
        parts.append(f"L_tr = {d['train_length']}")
    if d.get("steps"):
        parts.append(f"{human_count(d['steps'])} steps")
    return parts


def scale_statement(header: dict, spec: dict) -> str:
    """Says which preset produced 'ours' and whether that is the paper's scale."""
    ours = ", ".join([f"preset `{header.get('preset', 'unknown')}`"] + _architecture(header))
    paper_scale = spec.get("paper_scale")
    if isinstance(paper_scale, dict):
        paper_scale = {"train_length": spec.get("paper_train_length"), **paper_scale}
        same = all(header.get(k) == v for k, v in paper_scale.items() if v is not None)
        paper_text = ", ".join(_architecture(paper_scale))
    else:
        same = False  # without the paper's full setup we cannot claim to match it
        paper_text = paper_scale or f"L_tr = {spec.get('paper_train_length')}"
    verdict = "the paper's scale" if same else "NOT the paper's scale"
    return f"Ours: {ours} — {verdict} ({paper_text})"


def header_lines(header: dict) -> list[tuple[str, str]]:
    """(label, text) of each header fact not shown elsewhere (scale statement, sections)."""
    lines = []
    for key, value in header.items():
        if key in _SCALE_KEYS or value is None:
            continue
        if key in _PARAM_KEYS | _COUNT_KEYS and isinstance(value, (int, float)):
            value = human_count(value) + (" parameters" if key in _PARAM_KEYS else "")
        lines.append((_LABELS.get(key, key.replace("_", " ").capitalize()), str(value)))
    return lines
