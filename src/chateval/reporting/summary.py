"""The human-readable summary the CLI prints after a run."""

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from chateval.evaluation.diagnostics import cut_off_kinds, degenerate_reasons, per_model_rows
from chateval.reporting.formatting import ci_text, signed_ci
from chateval.reporting.statistics_text import (
    baselines_text,
    below_baselines,
    debate_effect_text,
    position_text,
)
from chateval.reporting.systems_view import systems_tables
from chateval.run.runner import RunResult


def _print_agreement(console: Console, aggregations: Mapping[str, Any]) -> None:
    """Agreement with the humans, hard and soft verdicts side by side."""
    found = {name: a["panel"] for name, a in aggregations.items() if "panel" in a}
    if all("accuracy" in panel for panel in found.values()):
        table = Table(title="agreement with human labels (95% CI)")
        for column in ("verdicts", "n", "accuracy", "kappa", "ties"):
            table.add_column(column)
        for name, panel in found.items():
            ties = aggregations[name].get("tie_share")
            table.add_row(
                name,
                str(panel["n"]),
                ci_text(panel["accuracy"]),
                ci_text(panel["kappa"]),
                "-" if ties is None else f"{100 * ties:.0f}%",
            )
        console.print(table)
        return
    for name, panel in found.items():
        table = Table(title=f"correlation with human scores, {name} verdicts (95% CI)")
        for column in ("dimension", "n", "spearman", "kendall"):
            table.add_column(column)
        for dimension, d in panel["dimensions"].items():
            table.add_row(dimension, str(d["n"]), ci_text(d["spearman"]), ci_text(d["kendall"]))
        if "average" in panel:
            table.add_row(
                "average",
                "",
                ci_text(panel["average"]["spearman"]),
                ci_text(panel["average"]["kendall"]),
            )
        console.print(table)


def _print_systems(console: Console, metrics: Mapping[str, Any]) -> None:
    """The systems the run judged: leaderboard, win rates, calibrated estimates."""
    for view in systems_tables(metrics):
        if view.headers:
            table = Table(title=view.title)
            for header in view.headers:
                table.add_column(header)
            for row in view.rows:
                table.add_row(*row)
            console.print(table)
        for note in view.notes:
            console.print(note, highlight=False, soft_wrap=True)


def print_summary(result: RunResult) -> None:
    """Print counts and metrics of a finished run as tables."""
    info = result.run_info
    metrics: Mapping[str, Any] = result.metrics or {}
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
            # Next to the failures: scores forced after reasoning cut off mid-sentence parse fine.
            table.add_row("cut_off_at_token_cap", cut_off_kinds(metrics.get("cut_off")))
    placement = info.get("placement")
    if placement:
        table.add_row("placement", f"{placement['mode']} ({placement['swaps']} swaps)")
    console.print(table)
    aggregations = metrics.get("aggregations", {})
    if any("panel" in a for a in aggregations.values()):
        _print_agreement(console, aggregations)
    if "baselines" in metrics:
        console.print(f"baselines: {baselines_text(metrics['baselines'])}", highlight=False, soft_wrap=True)
    below = below_baselines(metrics)
    if below:
        console.print(f"below baseline: {below}", highlight=False, soft_wrap=True)
    status = metrics.get("soft_verdicts")
    soft = aggregations.get("soft")
    if soft and "mean_entropy_bits" in soft:
        console.print(
            f"soft verdicts: {soft['scores_read']} scores read, mean entropy "
            f"{soft['mean_entropy_bits']:.2f} bits, {100 * soft['mean_ambiguous']:.1f}% of their mass "
            f"approximated, {100 * soft['mean_unmapped']:.1f}% unmapped",
            highlight=False,
        )
    elif status and status != "read":
        console.print(f"soft verdicts: {status}", highlight=False)
    versus = metrics.get("soft_vs_hard")
    if versus and "accuracy" in versus:
        console.print(
            f"soft minus hard, same items: accuracy {signed_ci(versus['accuracy']['difference'])}, "
            f"McNemar p = {versus['mcnemar']['p_value']:.3f}",
            highlight=False,
        )
    elif versus and "average" in versus:
        console.print(
            "soft minus hard, same items: average spearman "
            + signed_ci((versus["average"].get("spearman") or {}).get("difference")),
            highlight=False,
        )
    if "items_scored" in metrics and metrics["items_scored"] < metrics["items"]:
        console.print(
            f"items scored: {metrics['items_scored']} of {metrics['items']} "
            "(the others lost every verdict to parse failures"
            + ("; accuracy counts them as wrong)" if info.get("task") == "pairwise" else ")")
        )
    position = metrics.get("position")
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
    effect = debate_effect_text(metrics, int(info.get("agents") or 0))
    if effect:
        console.print(f"does the debate help? {effect}", highlight=False, soft_wrap=True)
    _print_systems(console, metrics)
    rows = per_model_rows(metrics, info)
    if rows:
        # Lines, not a table: eight columns do not fit an 80-column terminal.
        console.print("per model:")
        for model, referees, requests, with_panel, vs_humans, changed, echo, words, copy, cut in rows:
            opinions = "opinion probes off" if changed.startswith("-") else f"changed opinion {changed}"
            for line in (
                f"  {model} ({referees}; {requests} requests)",
                f"    agrees with panel {with_panel}, vs humans {vs_humans}, {opinions}",
                f"    echoes the prompt: {echo}",
                f"    copies another referee's words it saw: {words}",
                f"    copies a verdict it saw: {copy}",
                f"    cut off at the token cap: {cut}",
            ):
                console.print(line, highlight=False, soft_wrap=True)
        console.print(
            "  echoes: utterances repeating the prompt's instructions; copies: utterances\n"
            "  repeating 8 words in a row of another referee's, verdicts equal to one the\n"
            "  referee saw; chance: the same tests between referees who had seen none of\n"
            "  each other's words. High shares: a panel that repeats instead of judging.",
            highlight=False,
        )
    reasons = degenerate_reasons(metrics)
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
