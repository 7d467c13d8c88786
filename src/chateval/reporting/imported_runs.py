"""What every report says its own way of a run folder that ``chateval import`` wrote
(chateval.run.importing): another tool's judge, and no debate.

- **One judge is the panel.** Its per-referee and per-model figures repeat the panel's, and
  the debate's diagnostics (parroting, cut-off turns, empty assessments, scores at the scale's
  ends, unanimity, the debate's effect) cannot exist: the reports leave them out instead of
  showing rows of "-". An import of several agents' verdicts keeps its per-model figures, but
  not their columns that measured nothing; nor does any table of an import (an answer's
  length without its text).
- **A verdict the judge did not give** (a value the import maps to ``skip``, as MT-Bench's
  ``error``) is *skipped*, not lost to a parse failure. A reply that *did not parse* (ChatEval
  2023's, read by its own rule: the only import that parses texts) made its item a tie, and
  the reports say so. No line that measured nothing ("-", "unavailable: ...", "not measured:
  ...": a JudgeBench score without labels, the debate's effect without probes) is shown; a
  line that measured the imported judge itself (its scores at the scale's ends) is.
- **Its labels are human judgments or objective right answers** (JudgeBench's correct
  answers: ``labels.kind``), and the titles say which: "labels", not "human labels", when any
  run's are objective.
"""

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from chateval.evaluation.diagnostics.model_rows import PER_MODEL_COLUMNS
from chateval.evaluation.diagnostics.parroting import NOT_RECORDED
from chateval.evaluation.diagnostics.per_model_measure import LEGEND
from chateval.evaluation.measures import MEASURES, Table
from chateval.schema.run_info import RunInfo

LabelsKind = Literal["human", "objective"]
# The measures whose tables or lines an imported judge alone cannot fill: its per-model block
# repeats the panel's agreement beside diagnostics of a debate that did not happen.
ONE_JUDGE_TABLES = ("per_model",)
NOTHING = "-"  # a measure's text when it measured nothing
# How a measure's line says it measured nothing and why (a debate's setting, labels it lacked).
_NOTHING_BECAUSE = ("unavailable: ", "not measured: ")
# The per-model table's legend explains its parroting columns (echoes, recitation, copies):
# it goes where they do.
_PARROTING_COLUMNS = frozenset(PER_MODEL_COLUMNS[5:9])
# What the measures say of a debate's verdicts, as an import's are: its only assessments are
# its verdicts' own (none counted apart), and a verdict it lacks was skipped.
_IMPORTED_WORDS = (
    (f" (all assessments: {NOT_RECORDED})", " (an import holds no other assessments)"),
    ("every verdict failed", "every verdict skipped"),
)
# The one import that parses verdict texts is ChatEval 2023's (chateval.judging.verdicts_2023),
# whose rule makes an item with a reply that did not parse a tie.
UNPARSED_RULE = "the 2023 rule"
# What a measure's tables say of human labels, as the reports of objective labels say it.
_OBJECTIVE_WORDS = (
    ("the humans", "the labels"),
    ("with humans", "with the labels"),
    ("human labels", "labels"),
    ("human label", "label"),
    ("human win rate", "labelled win rate"),
)


@dataclass(frozen=True)
class ImportedRun:
    """What the reports need of an imported run's run.json."""

    judges: int  # its referees: one, the imported judge, unless an import of several agents
    labels: LabelsKind
    skipped: Mapping[str, int] = field(default_factory=dict)  # verdicts not given, by the file's value
    unparsed: int = 0  # replies that did not parse (ChatEval 2023's), each making its item a tie

    @property
    def one_judge(self) -> bool:
        return self.judges == 1

    @property
    def failed(self) -> str:
        """What the import's failed verdicts are, as a column or filter names them."""
        if self.unparsed and not self.skipped:
            return "did not parse"
        return "skipped or did not parse" if self.unparsed else "skipped"

    def failures_text(self) -> str:
        """``1 skipped (1 'error')``, ``2 verdicts did not parse: their items ties, the 2023
        rule``; ``0 skipped``."""
        skipped = sum(self.skipped.values())
        said = []
        if skipped or not self.unparsed:
            said.append(f"{skipped} skipped" + (f" ({skipped_text(self.skipped)})" if skipped else ""))
        if self.unparsed:
            said.append(unparsed_text(self.unparsed, "verdict"))
        return "; ".join(said)


def imported_run(info: RunInfo | None) -> ImportedRun | None:
    """The run's import, from its run.json; None: a run that debated."""
    imported = None if info is None else info.get("imported")
    if imported is None or info is None:
        return None
    labels = imported.get("labels")
    kind: LabelsKind = "objective" if labels and labels.get("kind") == "objective" else "human"
    judges = len(info.get("referees") or {}) or int(info.get("agents") or 1)
    skipped = dict(imported.get("skipped") or {})
    unparsed = max(0, int(info.get("verdict_parse_failures") or 0) - sum(skipped.values()))
    return ImportedRun(judges, kind, skipped, unparsed)


def labels_kind(info: RunInfo | None) -> LabelsKind:
    """What a run's labels are: an import's ``labels.kind``; a run's data holds human labels."""
    found = imported_run(info)
    return "human" if found is None else found.labels


def shared_kind(kinds: Iterable[LabelsKind]) -> LabelsKind:
    """How a report of runs with labels of ``kinds`` speaks of them: human when all are."""
    return "human" if all(kind == "human" for kind in kinds) else "objective"


def labels_name(kinds: Iterable[LabelsKind]) -> str:
    """How a title names the labels of runs with ``kinds``: "human labels" when all are human."""
    return labelled_title("human labels", shared_kind(kinds))


def labelled_title(title: str, kind: LabelsKind) -> str:
    """A title or a sentence that names human labels (a measure's, made for any run), said
    of labels of ``kind``."""
    if kind == "human":
        return title
    for human, said in _OBJECTIVE_WORDS:
        title = title.replace(human, said)
    return title


def measured(text: str) -> bool:
    """A measure's line measured something: not "-", nor why it could not ("unavailable: ...",
    "not measured: ...")."""
    return text != NOTHING and not text.startswith(_NOTHING_BECAUSE)


def measured_columns(table: Table) -> Table:
    """``table`` without the columns in which no row measured anything (every cell "-", or
    "-" and why: an imported judge's debate diagnostics, an import's answer lengths without
    texts), and without a legend of columns left out; a table of other columns unchanged."""
    if not table.rows:
        return table
    kept = [
        k
        for k in range(len(table.headers))
        if k == 0 or not all(row[k] == NOTHING or row[k].startswith(f"{NOTHING} (") for row in table.rows)
    ]
    if len(kept) == len(table.headers):
        return table
    headers = [table.headers[k] for k in kept]
    notes = [] if table.notes == LEGEND and _PARROTING_COLUMNS.isdisjoint(headers) else table.notes
    rows = [[row[k] for k in kept] for row in table.rows]
    return dataclasses.replace(table, headers=headers, rows=rows, notes=notes)


def imported_words(text: str) -> str:
    """A measure's text (a line, a cell, a note) as said of an import's verdicts."""
    for debated, said in _IMPORTED_WORDS:
        text = text.replace(debated, said)
    return text


def imported_table(table: Table) -> Table:
    """A measure's table of an imported run: its columns that measured something, its cells
    and notes as said of an import's verdicts."""
    table = measured_columns(table)
    return dataclasses.replace(
        table,
        rows=[[imported_words(cell) for cell in row] for row in table.rows],
        notes=[imported_words(note) for note in table.notes],
    )


def labelled_table(table: Table, kind: LabelsKind) -> Table:
    """A measure's table with its title, headers and notes said of labels of ``kind`` (its
    cells are data: left as they are)."""
    if kind == "human":
        return table
    return dataclasses.replace(
        table,
        title=labelled_title(table.title, kind),
        headers=[labelled_title(header, kind) for header in table.headers],
        notes=[labelled_title(note, kind) for note in table.notes],
    )


def skipped_text(skipped: Mapping[str, int]) -> str:
    """``1 'error'``: the verdicts skipped by value; ``none``."""
    return ", ".join(f"{n} {value!r}" for value, n in skipped.items()) or "none"


def unparsed_text(n: int, noun: str = "") -> str:
    """``2 did not parse: their items ties, the 2023 rule`` (``noun``: ``2 verdicts did ...``)."""
    named = f" {noun}{'' if n == 1 else 's'}" if noun else ""
    items = "its item a tie" if n == 1 else "their items ties"
    return f"{n}{named} did not parse: {items}, {UNPARSED_RULE}"


def failures_text(info: RunInfo) -> str:
    """A run's failed verdicts as a report's cell: an import's are skipped, by value, or did
    not parse (ChatEval 2023's replies: ties)."""
    found = imported_run(info)
    return str(info.get("verdict_parse_failures")) if found is None else found.failures_text()


def one_judge_tables() -> list[str]:
    """The titles of the table measures an imported judge alone leaves out (ONE_JUDGE_TABLES)."""
    return [MEASURES.get(name).title for name in ONE_JUDGE_TABLES if name in MEASURES]


def imported_rows(info: RunInfo) -> list[tuple[str, str]]:
    """What a run folder `chateval import` wrote holds, in place of a debate's counts; empty
    for a run that debated."""
    imported = info.get("imported")
    if imported is None:
        return []
    labels = imported["labels"]
    said = "none"
    if labels is not None:
        said = f"{labels['labelled']} comparisons, {labels['kind']}"
        if labels["path"] is not None:
            said += f" ({labels['path']}: {labels['votes']} votes, {labels['unused']} comparisons unused)"
    referees = info.get("referees") or {}
    found = imported_run(info)
    unparsed = found.unparsed if found is not None else 0
    pairwise = info["task"] == "pairwise"
    kept = f"{imported['kept']} of the file's {imported['records']} records"
    # The 2023 outputs skip no verdict: their failures are replies that did not parse.
    skipped = imported["skipped"] or not unparsed
    return [
        ("imported from", f"{imported['path']} ({imported['sha256'][:19]}...)"),
        ("judge", ", ".join(f"{name} ({model})" for name, model in referees.items()) + "; no model ran"),
        # a direct import's records are answers, each scored alone: no pairs, no answer orders
        ("comparisons" if pairwise else "answers judged", kept),
        *([("answer orders", "both" if info["position_calibration"] else "one")] if pairwise else []),
        *([("verdicts skipped", skipped_text(imported["skipped"]))] if skipped else []),
        *([("verdicts", unparsed_text(unparsed))] if unparsed else []),
        ("labels", said),
        ("imported at", imported["at"]),
    ]


def imported_line(info: RunInfo) -> str | None:
    """report.md's line of where an imported run's verdicts came from; None: a run that
    debated."""
    rows = imported_rows(info)
    if not rows:
        return None
    return "; ".join(f"{label} {text}" for label, text in rows if label != "answer orders")
