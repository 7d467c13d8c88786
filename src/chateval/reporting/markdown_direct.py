"""report.md's direct-scoring table: each run's Spearman / Kendall per dimension, the paper's
average over them (undefined when one of them is), the average of the defined dimensions,
labelled with the dimensions it covers (chateval.evaluation.agreement.metrics), and the labelled
responses they rest on."""

from collections.abc import Iterable, Sequence

from chateval.core.formatting import ci_text
from chateval.evaluation.agreement.correlation_rows import AVERAGE, CorrelationRow, correlation_rows
from chateval.reporting.imported_runs import failures_text, imported_run
from chateval.reporting.metrics_view import DirectView, run_view
from chateval.run.finished import FinishedRun
from chateval.schema.agreement import CorrelationInterval


def panel_desc(run: FinishedRun) -> str:
    """``3 x 2r, model``: referees, rounds and models; an imported judge's model alone."""
    agents = run.config.agents
    models = "/".join(sorted({a.model for a in agents}))
    if imported_run(run.info) is not None:
        return f"{models} (imported)"
    return f"{len(agents)} x {run.info['rounds']}r, {models}"


def direct_table(runs: Sequence[FinishedRun]) -> str:
    views = [(run, view) for run in runs if isinstance(view := run_view(run), DirectView)]
    found = [(run, {row.name: row for row in correlation_rows(view.panel)}) for run, view in views]
    dims = list(dict.fromkeys(name for _, rows in found for name, row in rows.items() if not row.is_average))
    imported = all(imported_run(run.info) is not None for run in runs)
    header = [
        "run",
        "strategy",
        "panel",
        *(f"{d} rho / tau" for d in dims),
        "average rho",
        "average tau",
        "average of the defined dimensions rho / tau",
        "labelled",
        "verdicts skipped" if imported else "parse failures",
    ]
    lines = [_row(header), "|" + " --- |" * len(header)]
    for run, rows in found:
        cells = [f"{_value(m.spearman)} / {_value(m.kendall)}" if (m := rows.get(d)) else "-" for d in dims]
        average = rows.get(AVERAGE)
        # Only labelled with the dimensions it covers: the paper's average is over all four.
        defined = next((row for name, row in rows.items() if row.is_average and name != AVERAGE), None)
        averages = [ci_text(average.spearman), ci_text(average.kendall)] if average else ["-", "-"]
        lines.append(
            _row(
                [run.name, run.info["strategy"], panel_desc(run), *cells, *averages]
                + [_defined_text(defined), _labelled(rows.values()), failures_text(run.info)]
            )
        )
    return "\n".join(lines)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _labelled(rows: Iterable[CorrelationRow]) -> str:
    """The labelled responses the correlations rest on: one n, or the range over dimensions."""
    counts = sorted({row.n for row in rows if row.n is not None})
    if not counts:
        return "-"
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


def _defined_text(row: CorrelationRow | None) -> str:
    """``0.312 / 0.250 (naturalness, coherence, groundedness)``; ``-`` without one."""
    if row is None:
        return "-"
    return f"{_value(row.spearman)} / {_value(row.kendall)} ({', '.join(row.covers or ())})"


def _value(metric: CorrelationInterval | None) -> str:
    """A correlation's value alone; ``undefined`` when it has none (a constant prediction)."""
    return "undefined" if metric is None or metric["value"] is None else f"{metric['value']:.3f}"
