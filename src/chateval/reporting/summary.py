"""The human-readable summary the CLI prints after a run."""

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from chateval.evaluation.diagnostics.text import COPY_RULE
from chateval.reporting.formatting import ci_text, signed_ci
from chateval.reporting.metrics_view import MetricsView, PairwiseView, metrics_view
from chateval.reporting.model_rows import per_model_rows
from chateval.reporting.statistics_text import (
    adaptive_text,
    baselines_text,
    below_baselines,
    debate_effect_text,
    position_text,
)
from chateval.reporting.systems_view import systems_tables
from chateval.run.runner import RunResult


def _print_agreement(console: Console, view: MetricsView) -> None:
    """Agreement with the humans, hard and soft verdicts side by side."""
    if isinstance(view, PairwiseView):
        table = Table(title="agreement with human labels (95% CI)")
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


def _print_systems(console: Console, view: MetricsView) -> None:
    """The systems the run judged: leaderboard, win rates, calibrated estimates."""
    for table_view in systems_tables(view.systems):
        if table_view.headers:
            table = Table(title=table_view.title)
            for header in table_view.headers:
                table.add_column(header)
            for row in table_view.rows:
                table.add_row(*row)
            console.print(table)
        for note in table_view.notes:
            console.print(note, highlight=False, soft_wrap=True)


def _print_soft(console: Console, view: MetricsView) -> None:
    """How the soft verdicts were read (or why not), and soft minus hard on the same items."""
    status = view.soft_status
    read = view.soft_distributions
    if read:
        console.print(
            f"soft verdicts: {read.scores_read} scores read, mean entropy "
            f"{read.mean_entropy_bits:.2f} bits, {100 * read.mean_ambiguous:.1f}% of their mass "
            f"approximated, {100 * read.mean_unmapped:.1f}% unmapped",
            highlight=False,
        )
    elif status and status != "read":
        console.print(f"soft verdicts: {status}", highlight=False)
    if isinstance(view, PairwiseView):
        pairwise = view.metrics.get("soft_vs_hard")
        if pairwise:
            console.print(
                f"soft minus hard, same items: accuracy {signed_ci(pairwise['accuracy']['difference'])}, "
                f"McNemar p = {pairwise['mcnemar']['p_value']:.3f}",
                highlight=False,
            )
        return
    direct = view.metrics.get("soft_vs_hard")
    if direct and "average" in direct:
        spearman = direct["average"].get("spearman")
        console.print(
            "soft minus hard, same items: average spearman "
            + signed_ci(spearman["difference"] if spearman else None),
            highlight=False,
        )


def _print_position(console: Console, view: PairwiseView) -> None:
    position = view.metrics.get("position")
    consistency = position_text(position)
    if position and consistency is not None:
        share = position["first_position_win_share"]
        # No decisive verdict means no evidence either way, not a 0% share.
        wins = "no decisive verdicts" if share is None else f"first-position wins {100 * share:.1f}%"
        by_position = position.get("soft_mean_by_position")
        if by_position:
            first, second = by_position["first"], by_position["second"]
            wins += f"; soft mean score shown first {first:.2f}, second {second:.2f}"
        console.print(f"position consistency {consistency}; {wins}", highlight=False, soft_wrap=True)


def _print_models(console: Console, view: MetricsView, result: RunResult) -> None:
    rows = per_model_rows(view, result.run_info.get("per_model", {}))
    if not rows:
        return
    # Lines, not a table: eight columns do not fit an 80-column terminal.
    console.print("per model:")
    for row in rows:
        changed = row.changed
        opinions = "opinion probes off" if changed.startswith("-") else f"changed opinion {changed}"
        for line in (
            f"  {row.model} ({row.referees}; {row.requests} requests)",
            f"    agrees with panel {row.with_panel}, vs humans {row.vs_humans}, {opinions}",
            f"    echoes the prompt: {row.echo}",
            f"    recites the item: {row.recites}",
            f"    copies another referee's words it saw: {row.words}",
            f"    equals a verdict it saw: {row.copy}",
            f"    cut off at the token cap: {row.cut}",
            f"    empty assessments: {row.empty}",
            f"    scores at the scale's ends: {row.ends}",
        ):
            console.print(line, highlight=False, soft_wrap=True)
    console.print(
        "  echoes: utterances repeating the prompt's instructions; recites: utterances\n"
        "  repeating 8 words in a row of the item's question or answers; copies:\n"
        "  utterances repeating 8 words in a row of another referee's; chance: the same\n"
        "  tests between referees who had seen none of each other's words; on another\n"
        "  item: the seen referee's verdict on another debate, which nobody copied.\n"
        + "".join(f"  {line}\n" for line in COPY_RULE.splitlines())
        + "  High shares: a panel that repeats instead of judging.",
        highlight=False,
    )


def print_summary(result: RunResult) -> None:
    """Print counts and metrics of a finished run as tables."""
    info = result.run_info
    view = metrics_view(info["task"], result.metrics)
    console = Console()
    table = Table(title=f"chateval run: {info['name']}", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for key in (
        "task",
        "backend",
        "strategy",
        "agents",
        "rounds",
        "items",
        "steps",
        "batches" if info.get("scheduling") == "barrier" else "engine_steps",
        "requests",
        "prompt_tokens",
        "generated_tokens",
        "verdict_parse_failures",
        "truncated_items",
        "model_load_seconds",
        "debate_seconds",
        "wall_seconds",
    ):
        table.add_row(key, str(info.get(key, "-")))
        if key == "verdict_parse_failures":
            # Next to the failures: scores forced after reasoning cut off mid-sentence parse fine,
            # and so do scores after an empty assessment (measures with a console row).
            for label, text in view.console_rows():
                table.add_row(label, text)
    placement = info.get("placement")
    if placement:
        table.add_row("placement", f"{placement['mode']} ({placement['swaps']} swaps)")
    console.print(table)
    if "adaptive" in info:
        console.print(adaptive_text(info["adaptive"]), highlight=False, soft_wrap=True)
    if any(row.panel is not None for row in view.aggregations):
        _print_agreement(console, view)
    if "baselines" in view.metrics:
        console.print(f"baselines: {baselines_text(view)}", highlight=False, soft_wrap=True)
    below = below_baselines(view)
    if below:
        console.print(f"below baseline: {below}", highlight=False, soft_wrap=True)
    _print_soft(console, view)
    items, scored = view.items, view.items_scored
    if items is not None and scored is not None and scored < items:
        console.print(
            f"items scored: {scored} of {items} "
            "(the others lost every verdict to parse failures"
            + ("; accuracy counts them as wrong)" if isinstance(view, PairwiseView) else ")")
        )
    if isinstance(view, PairwiseView):
        _print_position(console, view)
    effect = debate_effect_text(view, int(info.get("agents") or 0))
    if effect:
        console.print(f"does the debate help? {effect}", highlight=False, soft_wrap=True)
    _print_systems(console, view)
    _print_models(console, view, result)
    measured = view.measure_lines(in_console_rows=False)
    if measured:
        console.print("panel, all referees:")
        for title, text in measured:
            console.print(f"  {title}: {text}", highlight=False, soft_wrap=True)
    reasons = view.degenerate_reasons()
    if reasons:
        console.print(
            "warning: the panel looks degenerate: " + "; ".join(reasons), highlight=False, soft_wrap=True
        )
    console.print(f"results in {result.outdir}", highlight=False, soft_wrap=True)
    console.print(
        f"read the debates: chateval report {result.outdir} --html -o {result.outdir / 'report'}",
        highlight=False,
        soft_wrap=True,
    )


def print_bench(report: dict[str, Any]) -> None:
    """Print a ``chateval bench`` report as a table, each mode's note, and the two ratios."""
    console = Console()
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
