"""The human-readable summary the CLI prints after a run."""

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from chateval.core.formatting import ci_text
from chateval.core.table_console import table_console
from chateval.reporting.imported_runs import imported_rows, skipped_text
from chateval.reporting.measure_views import print_table
from chateval.reporting.metrics_view import MetricsView, PairwiseView, metrics_view
from chateval.reporting.statistics_text import (
    adaptive_text,
    below_baselines,
    requests_by_model,
    soft_reading_text,
    store_text,
)
from chateval.run.runner import RunResult
from chateval.schema.run_info import RunInfo


def _print_agreement(console: Console, view: MetricsView) -> None:
    """Agreement with the humans, hard and soft verdicts side by side."""
    if isinstance(view, PairwiseView):
        table = Table(title=f"agreement with {view.labels_name} (95% CI)")
        # n: the labelled items the accuracy and kappa rest on, not the run's items.
        for column in ("verdicts", "labelled n", "accuracy", "kappa", "ties"):
            table.add_column(column)
        for row in view.aggregations:
            if row.panel is None:
                continue
            ties = row.tie_share
            table.add_row(
                row.aggregation,
                str(row.panel["n"]),
                ci_text(row.panel["accuracy"]),
                ci_text(row.panel["kappa"]),
                "-" if ties is None else f"{100 * ties:.0f}%",
            )
        console.print(table)
        return
    for found in view.aggregations:
        if found.panel is None:
            continue
        table = Table(title=f"correlation with human scores, {found.aggregation} verdicts (95% CI)")
        for column in ("dimension", "labelled n", "spearman", "kendall"):
            table.add_column(column)
        for dimension in found.correlations:
            n = "" if dimension.n is None else str(dimension.n)
            table.add_row(dimension.name, n, ci_text(dimension.spearman), ci_text(dimension.kendall))
        console.print(table)


def _print_soft(console: Console, view: MetricsView) -> None:
    """How the soft verdicts were read (or why not: an imported judge's verdicts have none
    unless its file gave them, which is no setting to report)."""
    status = view.soft_status
    read = view.soft_distributions
    if view.imported is not None and not view.has_soft:
        return
    if read:
        console.print(soft_reading_text(read), highlight=False, soft_wrap=True)
    elif status and status != "read":
        console.print(f"soft verdicts: {status}", highlight=False)


def _print_imported(console: Console, info: RunInfo, view: MetricsView) -> None:
    table = Table(title=f"chateval import: {info['name']}", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    for label, text in imported_rows(info):
        table.add_row(label, text)
    for label, text in view.console_rows():
        table.add_row(label, text)
    console.print(table)


def print_summary(result: RunResult) -> None:
    """Print counts and metrics of a finished run as tables (an imported run: where its
    verdicts came from, in place of the debate's counts)."""
    info = result.run_info
    view = metrics_view(info["task"], result.metrics, info)
    console = table_console()
    if "imported" in info:
        _print_imported(console, info, view)
    else:
        _print_run(console, info, view)
    _print_metrics(console, result, view)


# The run table's rows: run.json's key, and the words the table shows for it.
RUN_ROWS = (
    ("task", "task"),
    ("backend", "backend"),
    ("strategy", "strategy"),
    ("agents", "referees"),
    ("rounds", "rounds"),
    ("items", "items"),
    ("steps", "debate steps"),
    ("batches", "engine calls (batches)"),
    ("engine_steps", "engine decoding steps"),
    ("requests", "requests"),
    ("prompt_tokens", "prompt tokens"),
    ("generated_tokens", "generated tokens"),
    ("verdict_parse_failures", "verdicts that failed to parse"),
    ("truncated_items", "items cut to fit the context"),
    ("model_load_seconds", "loading models (s)"),
    ("debate_seconds", "debating (s)"),
    ("wall_seconds", "in all (s)"),
)


def _print_run(console: Console, info: RunInfo, view: MetricsView) -> None:
    """The debate's counts, what it cost and where its models were."""
    table = Table(title=f"chateval run: {info['name']}", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    # A run counts batches (step-barrier scheduling) or engine steps (streaming), not both.
    calls = "batches" if info.get("scheduling") == "barrier" else "engine_steps"
    for key, label in RUN_ROWS:
        if key in ("batches", "engine_steps") and key != calls:
            continue
        table.add_row(label, str(info.get(key, "-")) + (requests_by_model(info) if key == "requests" else ""))
        if key == "verdict_parse_failures":
            # Next to the failures: scores forced after reasoning cut off mid-sentence parse fine,
            # and so do scores after an empty assessment (measures with a console row).
            for measure_label, text in view.console_rows():
                table.add_row(measure_label, text)
    placement = info.get("placement")
    if placement:
        table.add_row("placement", f"{placement['mode']} ({placement['swaps']} swaps)")
    console.print(table)


def _print_metrics(console: Console, result: RunResult, view: MetricsView) -> None:
    """The run's agreement with the humans, its measures and where to read on."""
    info = result.run_info
    if "judgment_store" in info:
        console.print(store_text(info["judgment_store"]), highlight=False, soft_wrap=True)
    if "adaptive" in info:
        console.print(adaptive_text(info["adaptive"]), highlight=False, soft_wrap=True)
    if any(row.panel is not None for row in view.aggregations):
        _print_agreement(console, view)
    below = below_baselines(view)
    if below:
        console.print(f"below baseline: {below}", highlight=False, soft_wrap=True)
    _print_soft(console, view)
    items, scored = view.items, view.items_scored
    if items is not None and scored is not None and scored < items:
        lost = "lost every verdict to parse failures"
        if view.imported is not None:
            lost = f"had their verdicts skipped: {skipped_text(view.imported.skipped)}"
        # Only labels make an accuracy to count them in (an import may have none).
        labelled = isinstance(view, PairwiseView) and any(row.panel is not None for row in view.aggregations)
        console.print(
            f"items scored: {scored} of {items} (the others {lost}"
            + ("; accuracy counts them as wrong)" if labelled else ")"),
            highlight=False,
        )
    # Every registered measure, as every report shows it (chateval.evaluation.measures).
    for title, text in view.measure_lines(in_console_rows=False):
        console.print(f"{title}: {text}", highlight=False, soft_wrap=True)
    for _, tables in view.measure_tables():
        for found in tables:
            print_table(console, found)
    reasons = view.degenerate_reasons()
    if reasons:
        console.print(
            "warning: the panel looks degenerate: " + "; ".join(reasons), highlight=False, soft_wrap=True
        )
    console.print(f"results in {result.outdir}", highlight=False, soft_wrap=True)
    console.print(
        f"read the debates: chateval report {result.outdir} (writes report.md and report.html in "
        f"{result.outdir / 'report'})",
        highlight=False,
        soft_wrap=True,
    )


def print_bench(report: dict[str, Any]) -> None:
    """Print a ``chateval bench`` report as a table, each mode's note, and the two ratios."""
    console = table_console()
    # Two-line headers and no vertical rules keep the table inside 80 columns, unshortened.
    table = Table(
        title=f"chateval bench: {report['config']} ({report['debates']} debates)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("mode")
    for numeric in (
        "seconds",
        "requests",
        "prompt\ntokens",
        "gen\ntokens",
        "gen\ntok/s",
        "cache\nhits",
        "peak\nGiB",
    ):
        table.add_column(numeric, justify="right")
    for m in report["modes"]:
        hit = m["prefix_cache_hit_rate"]
        table.add_row(
            m["mode"],
            f"{m['seconds']:.1f}",
            str(m["requests"]),
            str(m["prompt_tokens"]),
            str(m["generated_tokens"]),
            str(m["generated_tokens_per_second"]),
            "-" if hit is None else f"{100 * hit:.1f}%",
            str(m["peak_memory_gib"]),
        )
    console.print(table)
    # Notes go under the table: as a column they wrapped into a tall, unreadable one on 80-column terminals.
    for m in report["modes"]:
        if m["note"]:
            console.print(f"{m['mode']}: {m['note']}")
    console.print(
        f"scheduled vs sequential: {report['speedup_scheduled_vs_sequential']}x faster; "
        f"scheduled vs limit: {report['efficiency_scheduled_vs_limit']} of the engine's limit"
    )
