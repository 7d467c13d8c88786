"""The registered measures (chateval.evaluation.measures) laid out by every report alike: a line
measure as ``title: text``, a table measure as its tables (the console, rich tables; report.md,
Markdown; the HTML report takes the same Table values into its template)."""

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table as RichTable

from chateval.evaluation.measures import Table, about, is_table, registered_measures
from chateval.reporting.imported_runs import labelled_title, labels_kind, shared_kind
from chateval.reporting.metrics_view import run_view
from chateval.run.finished import FinishedRun


def markdown_table(table: Table) -> str:
    """A table as Markdown, its notes after it."""
    lines = []
    if table.headers:
        lines = ["| " + " | ".join(table.headers) + " |", "|" + " --- |" * len(table.headers)]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return "\n".join(lines + ([""] if lines and table.notes else []) + table.notes)


def print_table(console: Console, table: Table) -> None:
    """A table in the console: rich's, or (``as_records``) each row as a block of lines."""
    if table.as_records and table.rows:
        console.print(f"{table.title}:", highlight=False)
        for row in table.rows:
            console.print(f"  {row[0]}", highlight=False, soft_wrap=True)
            for header, cell in zip(table.headers[1:], row[1:], strict=True):
                console.print(f"    {header}: {cell}", highlight=False, soft_wrap=True)
    elif table.headers:
        shown = RichTable(title=table.title)
        for header in table.headers:
            shown.add_column(header)
        for row in table.rows:
            shown.add_row(*row)
        console.print(shown)
    for note in table.notes:
        console.print(("  " if table.as_records else "") + note, highlight=False, soft_wrap=True)


def _heading(title: str) -> str:
    return title[:1].upper() + title[1:]


def markdown_sections(runs: Sequence[FinishedRun]) -> list[str]:
    """report.md's lines for every registered measure the runs recorded: a line measure with an
    ``about`` under its own heading (each run's line), the other line measures under
    "Measures", then each table measure's tables per run."""
    parts: list[str] = []
    lines = {run.name: dict(run_view(run).measure_lines()) for run in runs}
    labels = shared_kind(labels_kind(run.info) for run in runs)  # what the paragraphs call the labels
    listed = []
    for measure in registered_measures():
        if is_table(measure):
            continue
        said = [(run, lines[run.name][measure.title]) for run in runs if measure.title in lines[run.name]]
        if not said:
            continue
        paragraph = about(measure)
        if paragraph is None:
            listed += [f"- {run.name}: {measure.title}: {text}" for run, text in said]
            continue
        parts += [f"## {_heading(measure.title)}", "", labelled_title(paragraph, labels), ""]
        parts += [f"- {run.name}: {text}" for run, text in said] + [""]
    known = {m.title for m in registered_measures()}
    listed += [
        f"- {run.name}: {title}: {text}"
        for run in runs
        for title, text in lines[run.name].items()
        if title not in known
    ]
    if listed:
        parts += ["## Measures", "", *listed, ""]
    for run in runs:
        for title, tables in run_view(run).measure_tables():
            parts += [f"## {_heading(title)}: {run.name}", ""]
            for table in tables:
                parts += [f"### {table.title}", "", markdown_table(table), ""]
    return parts
