"""What the HTML report shows its own way of a run ``chateval import`` wrote
(chateval.reporting.imported_runs): its settings without a debate's (extras, sampling, parse
failures: its skipped verdicts instead), its item columns without the debate's (cut-off turns,
early stops; with one judge, referees agreeing), each item's imported verdicts as given, and
the report's titles and filters when every run is imported or any run's labels are objective.

Plain values only (strings, flags): the templates escape them.
"""

from collections.abc import Iterable, Mapping, Sequence

from chateval.reporting.html_debates import RefereeView, number_text
from chateval.reporting.imported_runs import (
    UNPARSED_RULE,
    ImportedRun,
    imported_run,
    labels_kind,
    labels_name,
    skipped_text,
    unparsed_text,
)
from chateval.run.finished import FinishedRun
from chateval.schema.verdicts import RefereeRow, VerdictRecord

# Settings of a debate, which an import never ran (nor paid for).
_NO_DEBATE_SETTINGS = ("extras", "sampling", "cost")
_FAILURES = "parse failures"
SKIPPED = "verdicts skipped"
# The items filter of failed verdicts, by how an import's failed (ImportedRun.failed).
_FAILED_FILTERS = {
    "skipped": "skipped verdicts",
    "did not parse": "verdicts that did not parse",
    "skipped or did not parse": "skipped or unparsed verdicts",
}
# An imported referee's verdict, by the row's key: its scores where the source gave them
# (ChatEval 2023's replies), its winner always, the position of a preference on its scale
# (AlpacaEval's) and a strong verdict's weight (Arena-Hard's) where given.
_VERDICT_CELLS = (
    ("score_a", "score A"),
    ("score_b", "score B"),
    ("winner", "winner"),
    ("share_a", "A's share"),
    ("weight", "weight"),
)
# What the settings say of the columns beside a winner (``_verdict_text``).
_GIVEN_BESIDE_WINNERS = (
    ("A's share", "each preference's position on its scale"),
    ("weight", "strong verdicts weighted"),
)


def imported_settings(run: FinishedRun, settings: dict[str, str]) -> dict[str, str]:
    """``settings`` of an imported run: where its verdicts came from in place of the debate's
    settings, what its verdicts hold, its skipped (or unparsed) verdicts in place of parse
    failures; others' unchanged."""
    imported = run.info.get("imported")
    found = imported_run(run.info)
    if imported is None or found is None:
        return settings
    if run.task == "pairwise":
        scales = settings["verdict"].split(",")[0]  # without how a debate asked for them
        verdict = _verdict_text(pairwise_columns(run.verdicts()), scales)
    else:  # each dimension's scale; no answer orders to show
        verdict = ", ".join(f"{d.name} {d.low}-{d.high}" for d in run.config.dimensions) + " (imported)"
        settings = {key: value for key, value in settings.items() if key != "answer orders"}
    said = {
        "strategy": f"imported from {imported['path']} ({imported['sha256'][:19]}...), {imported['at']}",
        "verdict": verdict,
    }
    shown: dict[str, str] = {}
    for key, value in settings.items():
        if key in _NO_DEBATE_SETTINGS:
            continue
        if key == _FAILURES:
            shown[SKIPPED] = skipped_text(found.skipped)
            if found.unparsed:
                shown["verdicts unparsed"] = unparsed_text(found.unparsed)
            continue
        shown[key] = said.get(key, value)
    return shown


def _verdict_text(columns: Sequence[str], scales: str) -> str:
    """What an imported pairwise run's verdicts hold: ``scores 1-10 per answer (imported)``,
    ``winners only (imported: no scores)``, and the preferences or weights a source gave."""
    if "score A" in columns:
        return f"{scales} per answer (imported)"
    extra = [said for column, said in _GIVEN_BESIDE_WINNERS if column in columns]
    return ("winners, " + ", ".join(extra) if extra else "winners only") + " (imported: no scores)"


def pairwise_columns(records: Iterable[VerdictRecord]) -> list[str]:
    """An imported pairwise run's columns of a referee's verdict: those its rows hold
    (``_VERDICT_CELLS``), the winner always."""
    rows = (row for record in records for order in record.get("orders") or [] for row in order["referees"])
    keys = {key for row in rows for key in row}
    return [column for key, column in _VERDICT_CELLS if key in keys or key == "winner"]


def settings_keys(settings: Sequence[dict[str, str]]) -> list[str]:
    """The settings table's rows: every run's keys, in the order of a run that debated where
    one is shown (an imported run lacks a debate's settings)."""
    debated = [s for s in settings if SKIPPED not in s]
    return list(dict.fromkeys(key for found in [*debated, *settings] for key in found))


def common_columns(imported: ImportedRun) -> list[str]:
    """An imported run's item columns after its verdicts: no debate, so no cut-off turns or
    early stops; one judge, so no referees to disagree; its failed verdicts, as they failed."""
    return [*([] if imported.one_judge else ["referees agree"]), imported.failed]


def common_cells(imported: ImportedRun, split: bool, failures: int) -> list[str]:
    """The cells of ``common_columns``."""
    return [*([] if imported.one_judge else ["no" if split else "yes"]), str(failures)]


def pairwise_decision(record: VerdictRecord, imported: ImportedRun) -> str:
    """An imported item's verdicts as the judge gave them, order by order, and the decision."""
    orders = record.get("orders") or []
    failed = "skipped" if imported.skipped or not imported.unparsed else "did not parse"
    said = []
    for order in orders:
        shown = "answers swapped" if order.get("swapped") else "answers in order"
        referees = order.get("referees") or []
        winners = [str(row.get("winner") or failed) for row in referees]
        if len(referees) > 1:
            winners = [f"{row['agent']} {winner}" for row, winner in zip(referees, winners, strict=True)]
        said.append(f"{shown}: {', '.join(winners)}")
    decision = record.get("label")
    text = f"Imported verdicts, {'; '.join(said)}. Decision: {decision or 'none'}"
    text += " (both answer orders combined)." if len(orders) > 1 else "."
    if record.get("excluded_referees"):
        why = "a verdict skipped" if failed == "skipped" else f"a reply did not parse: a tie, {UNPARSED_RULE}"
        text += f" Left out ({why}): {', '.join(record['excluded_referees'])}."
    return text


def direct_decision(scores: Mapping[str, float], dims: Sequence[str]) -> str:
    """An imported answer's scores as the judge gave them, or that its verdict was skipped."""
    given = ", ".join(f"{d} {number_text(scores[d])}" for d in dims if d in scores)
    return f"Imported scores: {given}." if given else "Imported scores: none (the judge's verdict skipped)."


def imported_referee(row: RefereeRow, columns: Sequence[str]) -> RefereeView:
    """An imported referee's verdict in one order: what the source gave (``columns``, of
    ``pairwise_columns``), or why none."""
    error = f"{row['error']} (raw: {row.get('raw', '')})" if row.get("error") else ""
    cells = [number_text(row.get(key)) for key, column in _VERDICT_CELLS if column in columns]
    return RefereeView(str(row["agent"]), cells, [], "", error)


def report_filters(runs: Sequence[FinishedRun], filters: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The index's filters when every run is imported: skipped verdicts, not parse failures;
    with one judge each, no referees to disagree; without labels, no wrong decisions; in one
    answer order, none inconsistent."""
    imported = [imported_run(run.info) for run in runs]
    if not all(imported):
        return filters
    left_out = set()
    if all(found is not None and found.one_judge for found in imported):
        left_out.add("split")
    if not any(found["labels"] for run in runs if (found := run.info.get("imported")) is not None):
        left_out.add("wrong")
    if not any(run.info.get("position_calibration") for run in runs):
        left_out.add("inconsistent")
    failed = {found.failed for found in imported if found is not None}
    named = _FAILED_FILTERS[failed.pop() if len(failed) == 1 else "skipped or did not parse"]
    renamed = [(key, named if key == "failures" else label) for key, label in filters]
    return [(key, label) for key, label in renamed if key not in left_out]


def report_labels(runs: Sequence[FinishedRun]) -> str:
    """How the report names its runs' labels: "human labels", or "labels" when any are objective."""
    return labels_name(labels_kind(run.info) for run in runs)


def label_word(labels: str) -> str:
    """An item's label as a column names it: "human" for human labels, else "label"."""
    return "human" if labels == "human labels" else "label"


def imported_only(runs: Sequence[FinishedRun]) -> bool:
    """Every run's verdicts were imported: none was decoded here."""
    return all(imported_run(run.info) is not None for run in runs)
