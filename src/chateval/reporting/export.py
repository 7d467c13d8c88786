"""``chateval export``: a run's comparisons as flat rows (CSV), JSON lines, a JSON array or
Parquet, for a notebook; with ``--what leaderboard`` or ``--what pairs`` the systems it judged
instead (chateval.reporting.export_systems).

Comparisons are read from the run folder's ``verdicts.jsonl`` (``chateval.schema.verdicts.VerdictRecord``)
and ``config.yaml`` (read as today's ``RunConfig``: the task and, for direct scoring, the
dimensions); no model and no data file is needed.

**Pairwise**: one row per item and answer order (a comparison as the referees judged it), so
an item debated in both orders has two rows, ``order`` ``original`` and ``swapped``. Every
score is in the item's frame: ``score_a`` is the score of the item's answer A whichever answer
was shown first (``OrderRecord`` stores them so). The panel's decision for the item (over both
orders: the summed scores, ``panel_*``) is repeated on both of its rows: a win rate counts each
item once, from the rows with ``order == "original"`` (or one row per ``item_id``).

**Direct**: one row per item (response).

A JSON line holds the row's fields with its referees as a list (``referees``: one object per
referee, ``referee`` its name) and per-dimension scores as objects; a CSV row is the same line
flattened: a referee's fields become ``<referee>.<field>`` columns, an object's entries
``<field>.<key>`` (``Critic.score_a``, ``panel_scores.fluency``, ``Critic.scores.fluency``).
Every row of a run has the same fields; what a record lacks (soft scores of a run without
token probabilities, the systems of items that name none, a referee's scores when its verdict
did not parse) is null, an empty CSV cell.
"""

import csv
import importlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from chateval.config.run import RunConfig
from chateval.core.textfile import write_bytes, write_text
from chateval.errors import ConfigError, DataError
from chateval.record.files import RunFolder
from chateval.reporting.export_systems import Cell, category_rows, systems_table
from chateval.run.finished import load_finished_run, read_run_config
from chateval.schema.verdicts import RefereeRow, VerdictRecord

Format = Literal["csv", "jsonl", "json", "parquet"]
FORMATS: tuple[Format, ...] = ("csv", "jsonl", "json", "parquet")
SUFFIXES: dict[str, Format] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
}
What = Literal["comparisons", "pairs", "leaderboard", "categories"]
WHATS: tuple[What, ...] = ("comparisons", "pairs", "leaderboard", "categories")

Json = Cell | dict[str, "Json"] | list["Json"]
Row = dict[str, Json]  # a JSON object: cells, objects of cells, and ``referees`` (a list of objects)


@dataclass(frozen=True)
class Export:
    """A run's rows, ready to write. ``finished``: the run wrote run.json (a run killed after
    writing verdicts.jsonl, which is written whole, has every record but no run.json)."""

    folder: Path
    task: str
    referees: tuple[str, ...]
    rows: list[Row]
    finished: bool
    what: What = "comparisons"


def choose_format(fmt: str | None, output: Path | None) -> Format:
    """The format asked for; without one, the output file's suffix decides (stdout: csv)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ConfigError(f"--format {fmt!r}: unknown format; use one of {', '.join(FORMATS)}")
        return fmt
    if output is None:
        return "csv"
    suffix = output.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(
            f"{output}: cannot tell the format from the suffix {suffix or '(none)'!r} "
            f"(known: {', '.join(SUFFIXES)}); pass --format {'|'.join(FORMATS)}"
        )
    return SUFFIXES[suffix]


def choose_what(what: str) -> What:
    """``--what``: comparisons, pairs or leaderboard."""
    if what not in WHATS:
        raise ConfigError(f"--what {what!r}: unknown table; use one of {', '.join(WHATS)}")
    return what


def read_run(folder: Path) -> tuple[RunConfig, list[VerdictRecord], bool]:
    """The run's config (today's ``RunConfig``), its verdict records and whether it finished; a
    DataError names the folder and what is missing."""
    if not folder.is_dir():
        raise DataError(f"{folder}: no such run folder")
    files = RunFolder(folder)
    if not files.config.is_file():
        raise DataError(f"{folder}: not a run folder (no {files.config.name})")
    if not files.verdicts.is_file():
        state = (
            f"it is running, or was stopped: {files.journal.name} holds its finished steps and the "
            "same run command resumes it"
            if files.journal.is_file()
            else "no debate step has finished"
        )
        raise DataError(f"{folder}: no {files.verdicts.name}; the run has not finished ({state})")
    config = read_run_config(files)
    key = "orders" if config.task == "pairwise" else "referees"
    records = files.read_verdicts()  # validated: a DataError names a bad line and field
    for number, record in enumerate(records, 1):
        if key not in record:
            raise DataError(
                f"{files.verdicts}: record {number} (item {record['item_id']}): a {config.task} record "
                f"needs {key}"
            )
    return config, records, files.finished()


def export_run(folder: Path, what: What = "comparisons") -> Export:
    """The rows of the run in ``folder``: its comparisons (pairwise: per item and order; direct:
    per item), or the ``leaderboard`` or ``pairs`` of the systems it judged (its metrics.json)."""
    if what != "comparisons":
        return _export_systems(folder, what)
    config, records, finished = read_run(folder)
    referees = _referee_names(records)
    if config.task == "pairwise":
        rows = pairwise_rows(records, referees)
    else:
        rows = direct_rows(records, referees, [dimension.name for dimension in config.dimensions])
    return Export(folder, config.task, referees, rows, finished)


def _export_systems(folder: Path, what: What) -> Export:
    if not folder.is_dir():
        raise DataError(f"{folder}: no such run folder")
    run = load_finished_run(folder)
    if run.metrics is None:
        raise DataError(f"{folder}: no metrics.json; `chateval rescore {folder}` writes it")
    if what == "categories":
        found = (run.metrics.get("measures") or {}).get("categories")
        if not found:
            raise DataError(
                f"{folder}: its items have no categories (map the data's category field with "
                "data.fields.category, or questions.category, and run it)"
            )
        by_category: list[Row] = [dict(row) for row in category_rows(found, run.task)]
        return Export(folder, run.task, (), by_category, True, what)
    section = run.metrics.get("systems")
    if not section:
        raise DataError(
            f"{folder}: the run judged no named systems (its items name none), so there is no "
            f"{what} to export; --what comparisons exports its verdicts"
        )
    rows: list[Row] = [dict(row) for row in systems_table(section, what)]
    return Export(folder, run.task, (), rows, True, what)


def _referee_names(records: Sequence[VerdictRecord]) -> tuple[str, ...]:
    """Every referee that gave (or failed) a verdict, in the order of the panel."""
    names: dict[str, None] = {}
    for record in records:
        for order in record.get("orders", []):
            names |= dict.fromkeys(r["agent"] for r in order["referees"])
        names |= dict.fromkeys(r["agent"] for r in record.get("referees", []))
    return tuple(names)


def _flags(row: RefereeRow | None) -> dict[str, Cell]:
    """A referee's cut-off, copy and parse-error flags (null where the run did not record them)."""
    if row is None:
        return dict.fromkeys(("cut_off", "copied_words", "copied_scores_from", "parse_error"))
    cut_off = row.get("cut_off")
    parroting = row.get("parroting")
    return {
        # its verdict's assessment stopped at the token cap (null: no assessment was asked)
        "cut_off": None if cut_off is None else cut_off.get("verdict_assessment_cut"),
        # an utterance of its repeated words of another referee it saw
        "copied_words": None
        if parroting is None or "copied_words" not in parroting
        else parroting["copied_words"] > 0,
        # the referee whose verdict's scores its verdict repeated
        "copied_scores_from": None if parroting is None else parroting.get("copied_from"),
        "parse_error": row.get("error"),
    }


def pairwise_rows(records: Iterable[VerdictRecord], referees: Sequence[str]) -> list[Row]:
    """One row per pairwise item and answer order; scores in the item's A/B frame."""
    rows: list[Row] = []
    for record in records:
        excluded = set(record.get("excluded_referees", []))
        for order in record["orders"]:
            given = {r["agent"]: r for r in order["referees"]}
            entries: list[Json] = []
            for name in referees:
                ref = given.get(name)
                entries.append(
                    {
                        "referee": name,
                        "score_a": None if ref is None else ref.get("score_a"),
                        "score_b": None if ref is None else ref.get("score_b"),
                        "soft_score_a": None if ref is None else ref.get("soft_score_a"),
                        "soft_score_b": None if ref is None else ref.get("soft_score_b"),
                        "winner": None if ref is None else ref.get("winner"),
                        # left out of the item's decision (its verdict failed in an order)
                        "excluded": None if ref is None else name in excluded,
                        **_flags(ref),
                    }
                )
            rows.append(
                {
                    "item_id": record["item_id"],
                    "prompt": record.get("prompt"),
                    "system_a": record.get("system_a"),
                    "system_b": record.get("system_b"),
                    "order": "swapped" if order["swapped"] else "original",
                    "referees": entries,
                    "order_label": order["label"],  # the majority of this order's referees
                    "panel_label": record.get("label"),
                    "panel_score_a": record.get("score_a"),
                    "panel_score_b": record.get("score_b"),
                    "panel_soft_label": record.get("soft_label"),
                    "panel_soft_score_a": record.get("soft_score_a"),
                    "panel_soft_score_b": record.get("soft_score_b"),
                    "human_label": record.get("human_label"),
                    "words_a": record.get("words_a"),
                    "words_b": record.get("words_b"),
                    "truncated": _truncated(record),
                }
            )
    return rows


def _truncated(record: VerdictRecord) -> bool | None:
    """Whether the item was cut to fit a model's context (null: not recorded)."""
    return None if "truncated" not in record else record["truncated"] is not None


def _by_dimension(values: Mapping[str, float] | None, dimensions: Sequence[str]) -> dict[str, Json]:
    return {d: None if values is None else values.get(d) for d in dimensions}


def direct_rows(
    records: Sequence[VerdictRecord], referees: Sequence[str], dimensions: Sequence[str]
) -> list[Row]:
    """One row per direct-scoring item. The scores' dimensions are ``dimensions`` (the
    config's), then any other a referee's scores hold; the human scores' are those the
    records hold."""
    scored: dict[str, None] = dict.fromkeys(dimensions)
    human: dict[str, None] = {}
    for record in records:
        for row in record["referees"]:
            scored |= dict.fromkeys(row.get("scores", {}))
        human |= dict.fromkeys(record.get("human_scores") or {})
    rows: list[Row] = []
    for record in records:
        given = {r["agent"]: r for r in record["referees"]}
        entries: list[Json] = []
        for name in referees:
            ref = given.get(name)
            entries.append(
                {
                    "referee": name,
                    "scores": _by_dimension(None if ref is None else ref.get("scores"), list(scored)),
                    "soft_scores": _by_dimension(
                        None if ref is None else ref.get("soft_scores"), list(scored)
                    ),
                    **_flags(ref),
                }
            )
        rows.append(
            {
                "item_id": record["item_id"],
                "prompt": record.get("prompt", record.get("group")),
                "system": record.get("system"),
                "referees": entries,
                "panel_scores": _by_dimension(record.get("scores"), list(scored)),
                "panel_soft_scores": _by_dimension(record.get("soft_scores"), list(scored)),
                "human_scores": _by_dimension(record.get("human_scores"), list(human)),
                "response_words": record.get("response_words"),
                "truncated": _truncated(record),
            }
        )
    return rows


def flatten(row: Row) -> dict[str, Cell]:
    """A row as CSV cells: ``<referee>.<field>`` per referee, ``<field>.<key>`` per object entry."""
    cells: dict[str, Cell] = {}

    def put(prefix: str, value: Json) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                put(f"{prefix}.{key}", inner)
        else:  # rows hold no list but ``referees``: one would show as its JSON text
            cells[prefix] = json.dumps(value) if isinstance(value, list) else value

    for key, value in row.items():
        if key == "referees" and isinstance(value, list):
            for entry in value:
                if isinstance(entry, dict):
                    for field, inner in entry.items():
                        if field != "referee":
                            put(f"{entry['referee']}.{field}", inner)
        else:
            put(key, value)
    return cells


def columns(export: Export) -> list[str]:
    """The CSV header: every row's flattened fields, in order of first appearance (the rows of a
    run's comparisons all have the same; a categories table's rows may lack a system's)."""
    return list(dict.fromkeys(key for row in export.rows for key in flatten(row)))


def render(export: Export, fmt: Format) -> str:
    """The rows as CSV (a header line, then one line per row; null as an empty cell), JSONL or
    a JSON array (Parquet is binary: ``write``)."""
    if fmt == "parquet":
        raise ConfigError("Parquet is a binary format: give a file to write it to (-o FILE.parquet)")
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in export.rows)
    if fmt == "json":
        return json.dumps(export.rows, ensure_ascii=False, indent=1) + "\n"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns(export), lineterminator="\n")
    writer.writeheader()
    for row in export.rows:
        writer.writerow({k: "" if v is None else v for k, v in flatten(row).items()})  # absent: empty
    return buffer.getvalue()


def write(export: Export, fmt: Format, output: Path) -> None:
    """Write the rows to ``output`` in ``fmt`` (atomically; Parquet with pyarrow, one column
    per CSV column)."""
    if fmt != "parquet":
        write_text(output, render(export, fmt))
        return
    # pyarrow has no type stubs; the data loaders import it the same way (data/files.py).
    pa, pq = importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    header = columns(export)  # every row's columns, absent ones null (from_pylist keeps only the first's)
    flat = [flatten(row) for row in export.rows]
    try:
        table = pa.Table.from_pydict({key: [row.get(key) for row in flat] for key in header})
        buffer = pa.BufferOutputStream()
        pq.write_table(table, buffer)
    except pa.lib.ArrowException as exc:  # a column whose cells mix types Parquet cannot hold
        raise DataError(f"{output}: cannot write these rows as Parquet ({exc}); use --format csv") from None
    write_bytes(output, buffer.getvalue().to_pybytes())
