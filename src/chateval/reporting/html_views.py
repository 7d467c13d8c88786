"""What the HTML report shows, read from run folders: each run's settings and metrics (laid out
by html_runs.py), and per item its data, each run's outcome and its debates (each laid out by
html_debates.py).

Plain values only (strings, numbers, flags): the templates in ``reporting/templates/`` lay them
out and escape them. Several runs of the same data line up by item id.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from chateval.core.items import Item, PairwiseItem
from chateval.core.progress import Progress
from chateval.errors import DataError
from chateval.evaluation.measures import Table
from chateval.reporting.html_debates import (
    DebateView,
    debate_view,
    debated_decision,
    direct_referee,
    number_text,
    pairwise_referee,
    truncation_text,
)
from chateval.reporting.html_imported import (
    common_cells,
    common_columns,
    direct_decision,
    imported_only,
    imported_referee,
    label_word,
    pairwise_columns,
    pairwise_decision,
    report_filters,
    report_labels,
    settings_keys,
)
from chateval.reporting.html_runs import RunView, metric_rows, run_settings, speakers
from chateval.reporting.imported_runs import ImportedRun, imported_run
from chateval.reporting.metrics_view import run_view
from chateval.run.finished import FinishedRun
from chateval.schema.transcripts import TranscriptMessage
from chateval.schema.verdicts import VerdictRecord

PAIRWISE_FILTERS = (
    ("wrong", "wrong"),
    ("inconsistent", "position-inconsistent"),
    ("failures", "parse failures"),
    ("split", "referees disagreeing"),
)
DIRECT_FILTERS = (("failures", "parse failures"), ("split", "referees disagreeing"))
RUNS_DISAGREE = ("runs", "runs disagreeing")
_SNIPPET_CHARS = 80


@dataclass(frozen=True)
class Outcome:
    """One run's result on one item: the index row's cells and the item view's decision."""

    cells: list[str]
    label: str  # the panel's label (direct: its scores): runs whose labels differ disagree
    decision: str
    flags: dict[str, bool]


@dataclass(frozen=True)
class ItemView:
    number: int
    id: str
    human: str
    cells: list[str]  # the item's own cells: its text's start, human labels or scores
    data: Item | None
    outcomes: list[Outcome | None]  # per run; None where a run lacks the item
    debates: list[DebateView]
    flags: dict[str, bool] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return f"item-{self.number}"


# --- items --------------------------------------------------------------------------------


def _read_transcripts(run: FinishedRun) -> dict[str, list[TranscriptMessage]]:
    """Each debate's messages by its key; none when the folder kept no transcripts (a copy kept
    for its verdicts only): the item pages then show the verdicts without the talk."""
    return {record["key"]: record["messages"] for record in run.transcripts()}


def _cut_messages(debates: Sequence[DebateView]) -> int:
    """Utterances the model ended at their token limit."""
    said = [m for d in debates for m in (*(m for r in d.rounds for m in r.messages), *d.hidden)]
    return sum(m.finish_reason == "length" for m in said)


@dataclass
class _RunItems:
    """One run, read: its verdict records by item, transcripts and speakers."""

    run: FinishedRun
    records: dict[str, VerdictRecord]
    transcripts: dict[str, list[TranscriptMessage]]
    speakers: dict[str, tuple[str, str]]
    dims: list[str]
    scales: list[range]  # pairwise: the one score scale; direct: each dimension's

    @property
    def soft(self) -> bool:
        """The run has soft verdicts (asked for, and its backends gave probabilities)."""
        return run_view(self.run).has_soft

    @property
    def calibrated(self) -> bool:
        return bool(self.run.info.get("position_calibration"))

    @property
    def imported(self) -> ImportedRun | None:
        """The run's import (``chateval import``); None: it debated."""
        return imported_run(self.run.info)

    @cached_property
    def imported_columns(self) -> list[str]:
        """An imported pairwise run's columns of a referee's verdict: what its source gave."""
        return pairwise_columns(self.records.values())


def _read(run: FinishedRun) -> _RunItems:
    records = {str(r["item_id"]): r for r in run.verdicts()}
    dimensions = run.config.dimensions
    dims = [d.name for d in dimensions]
    verdict = run.config.verdict
    if dimensions:
        scales = [range(d.low, d.high + 1) for d in dimensions]
    else:
        scales = [range(verdict.low, verdict.high + 1)]
    return _RunItems(run, records, _read_transcripts(run), speakers(run), dims, scales)


def _run_columns(read: _RunItems) -> list[str]:
    """The columns one run adds to the item index."""
    if read.run.info.get("task") == "pairwise":
        columns = ["panel", *(["soft"] if read.soft else []), "correct"]
        columns += ["orders agree"] if read.calibrated else []
    else:
        columns = [*read.dims, *([f"{d} (soft)" for d in read.dims] if read.soft else [])]
    if read.imported is not None:
        return [*columns, *common_columns(read.imported)]
    return [*columns, "referees agree", "parse failures", "cut / truncated", "early stop"]


def _pairwise_outcome(read: _RunItems, record: VerdictRecord, debates: list[DebateView]) -> Outcome:
    orders = record.get("orders") or []
    human = record.get("human_label")
    label = str(record.get("label") or "")
    correct = None if human is None else label == human
    inconsistent = len({o.get("label") for o in orders}) > 1
    split = len(set((record.get("referee_labels") or {}).values())) > 1
    failures = int(record.get("parse_failures") or 0)
    cells = [label, *([number_text(record.get("soft_label"))] if read.soft else [])]
    cells += ["" if correct is None else ("yes" if correct else "no")]
    cells += [("no" if inconsistent else "yes")] if read.calibrated else []
    cells += _common_cells(read, split, failures, record, debates)
    flags = {
        "wrong": correct is False,
        "inconsistent": inconsistent,
        "failures": failures > 0,
        "split": split,
    }
    if read.imported is None:
        decision = debated_decision(record, len(orders))
    else:
        decision = pairwise_decision(record, read.imported)
    return Outcome(cells, label, decision, flags)


def _common_cells(
    read: _RunItems, split: bool, failures: int, record: VerdictRecord, debates: list[DebateView]
) -> list[str]:
    if read.imported is not None:
        return common_cells(read.imported, split, failures)
    cut = _cut_messages(debates)
    truncated = "truncated" if record.get("truncated") else ""
    return [
        "no" if split else "yes",
        str(failures),
        " / ".join(x for x in (str(cut) if cut else "", truncated) if x),
        "yes" if any(d.stopped_early for d in debates) else "",
    ]


def _direct_outcome(read: _RunItems, record: VerdictRecord, debates: list[DebateView]) -> Outcome:
    scores, soft = record.get("scores") or {}, record.get("soft_scores") or {}
    referees = record.get("referees") or []
    split = any(
        len({(r.get("scores") or {}).get(d) for r in referees if r.get("scores")}) > 1 for d in read.dims
    )
    failures = int(record.get("parse_failures") or 0)
    cells = [number_text(scores.get(d)) for d in read.dims]
    cells += [number_text(soft.get(d)) for d in read.dims] if read.soft else []
    cells += _common_cells(read, split, failures, record, debates)
    decision = "The mean of the referees' scores per dimension" + (
        f": {', '.join(f'{d} {number_text(scores[d])}' for d in read.dims if d in scores)}."
        if scores
        else ": no referee's scores parsed."
    )
    if read.imported is not None:
        decision = direct_decision(scores, read.dims)
    if soft:
        expected = ", ".join(f"{d} {number_text(v)}" for d, v in soft.items())
        decision += f" Soft: the mean of the expected scores, {expected}."
    truncation = truncation_text(record)
    decision += f" Inputs cut to fit the context: {truncation}." if truncation else ""
    flags = {"failures": failures > 0, "split": split}
    return Outcome(cells, " ".join(cells[: len(read.dims)]), decision, flags)


def _debates(read: _RunItems, record: VerdictRecord, item_id: str) -> list[DebateView]:
    name = read.run.name
    if "orders" not in record:
        columns = [*read.dims]
        referees = [direct_referee(r, read.dims, read.scales) for r in record.get("referees") or []]
        return [debate_view(name, "", read.transcripts.get(item_id, []), referees, columns, read.speakers)]
    columns = ["score A", "score B", "soft A", "soft B", "winner"]
    if read.imported is not None:
        columns = read.imported_columns
    views = []
    for order in record["orders"]:
        swapped = bool(order.get("swapped"))
        key = f"{item_id}#swapped" if swapped else item_id
        title = "answers swapped (B shown first)" if swapped else "answers in order (A shown first)"
        rows = order.get("referees") or []
        if read.imported is not None:
            referees = [imported_referee(r, columns) for r in rows]
        else:
            referees = [pairwise_referee(r, swapped, read.scales[0]) for r in rows]
        views.append(
            debate_view(name, title, read.transcripts.get(key, []), referees, columns, read.speakers)
        )
    return views


def _human(record: VerdictRecord, dims: Sequence[str]) -> tuple[str, list[str]]:
    if "orders" in record:
        label = record.get("human_label")
        return ("" if label is None else str(label)), ["" if label is None else str(label)]
    scores = record.get("human_scores") or {}
    cells = [number_text(scores.get(d)) for d in dims]
    return ", ".join(f"{d} {v}" for d, v in zip(dims, cells, strict=True) if v), cells


class RunsApart(DataError):
    """Runs one page cannot show side by side: of different tasks, or sharing no item."""


def _check_same_task(runs: Sequence[FinishedRun]) -> str:
    tasks = {r.task for r in runs}
    if len(tasks) > 1:
        raise RunsApart(
            "report.html puts runs of one task side by side; got "
            + ", ".join(f"{r.folder} ({r.task})" for r in runs)
        )
    return tasks.pop()


def _recorded_items(run: FinishedRun) -> dict[str, Item]:
    """The run's items as it debated them (empty for a folder that kept none)."""
    return {item.id: item for item in run.items() or []}


@dataclass(frozen=True)
class Report:
    """Everything the page shows."""

    task: str
    runs: list[RunView]
    filters: list[tuple[str, str]]
    item_columns: list[str]
    items: list[ItemView]
    notices: list[str] = field(default_factory=list)  # items not as the data file has them, and why
    # sections beside the runs' own (``chateval compare``'s "Judges compared"): heading, tables
    sections: list[tuple[str, list[Table]]] = field(default_factory=list)
    labels: str = "human labels"  # "labels" when a run's are objective (an import's)
    imported_only: bool = False  # every run's verdicts were imported: none decoded here

    @property
    def title(self) -> str:
        return " vs ".join(r.name for r in self.runs)

    @property
    def settings_keys(self) -> list[str]:
        """The rows of the runs' settings table: every run's (an imported one lacks a debate's)."""
        return settings_keys([run.settings for run in self.runs])

    @property
    def label_word(self) -> str:
        """What an item's label is called: "human", or "label" when a run's are objective."""
        return label_word(self.labels)


def build_report(runs: Sequence[FinishedRun], progress: Progress | None = None) -> Report:
    """The page of one run, or of several runs of the same data side by side (``progress``
    counts the items built)."""
    if not runs:
        raise DataError("report.html needs at least one run folder")
    task = _check_same_task(runs)
    reads = [_read(r) for r in runs]
    ids = list(dict.fromkeys(i for read in reads for i in read.records))
    shared = set.intersection(*(set(read.records) for read in reads))
    if len(runs) > 1 and not shared:
        raise RunsApart(
            "report.html lines runs up by item id, and these runs share none: "
            + ", ".join(str(r.folder) for r in runs)
        )
    data = {i: item for read in reversed(reads) for i, item in _recorded_items(read.run).items()}
    dims = reads[0].dims
    items = []
    bar = progress or Progress()
    bar.start(len(ids))
    for number, item_id in enumerate(ids, 1):
        outcomes: list[Outcome | None] = []
        debates: list[DebateView] = []
        human, human_cells = "", [""] * (1 if task == "pairwise" else len(dims))
        for read in reads:
            record = read.records.get(item_id)
            if record is None:
                outcomes.append(None)
                continue
            views = _debates(read, record, item_id)
            debates += views
            build = _pairwise_outcome if task == "pairwise" else _direct_outcome
            outcomes.append(build(read, record, views))
            human, human_cells = _human(record, dims) if not human else (human, human_cells)
        present = [o for o in outcomes if o is not None]
        flags = {key: any(o.flags.get(key) for o in present) for key in present[0].flags}
        if len(runs) > 1:
            flags["runs"] = len({o.label for o in present}) > 1 or len(present) < len(runs)
        item = data.get(item_id)
        cells = [item_snippet(item), *human_cells]
        items.append(ItemView(number, item_id, human, cells, item, outcomes, debates, flags))
        bar.update(1, 1)
    filters = report_filters(runs, list(PAIRWISE_FILTERS if task == "pairwise" else DIRECT_FILTERS))
    filters += [RUNS_DISAGREE] if len(runs) > 1 else []
    run_views = [
        RunView(
            r.run.name,
            run_settings(r.run),
            metric_rows(r.run),
            _run_columns(r),
            run_view(r.run).measure_tables(),
        )
        for r in reads
    ]
    labels = report_labels(runs)
    word = label_word(labels)
    item_columns = ["question", word] if task == "pairwise" else ["response", *(f"{word} {d}" for d in dims)]
    notices = [notice for r in runs if (notice := r.items_notice(shown_from_others=bool(data))) is not None]
    return Report(
        task,
        run_views,
        filters,
        item_columns,
        items,
        notices,
        labels=labels,
        imported_only=imported_only(runs),
    )


def item_snippet(item: Item | None, chars: int = _SNIPPET_CHARS) -> str:
    """The start of an item's question (direct: of its response), at most ``chars`` long: its
    index row's text, or a cell of ``chateval compare``'s table."""
    if item is None:
        return ""
    text = " ".join((item.question if isinstance(item, PairwiseItem) else item.response).split())
    return text if len(text) <= chars else text[: chars - 1] + "…"
