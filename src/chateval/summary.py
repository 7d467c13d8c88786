"""The human-readable summary the CLI prints after a run."""

from rich.console import Console
from rich.table import Table

from chateval.runner import RunResult


def print_summary(result: RunResult) -> None:
    """Print counts and metrics of a finished run as tables."""
    info = result.run_info
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
        "backend_calls",
        "requests",
        "prompt_tokens",
        "generated_tokens",
        "verdict_parse_failures",
        "model_load_seconds",
        "debate_seconds",
        "wall_seconds",
    ):
        table.add_row(key, str(info[key]))
    console.print(table)
    if result.metrics:
        panel = result.metrics["panel"]
        metrics = Table(title="agreement with human labels")
        if "accuracy" in panel:
            metrics.add_column("n")
            metrics.add_column("accuracy")
            metrics.add_column("kappa")
            metrics.add_row(str(panel["n"]), f"{panel['accuracy']:.3f}", f"{panel['kappa']:.3f}")
        else:
            metrics.add_column("dimension")
            metrics.add_column("n")
            metrics.add_column("spearman")
            metrics.add_column("kendall")
            for name, d in panel["dimensions"].items():
                metrics.add_row(name, str(d["n"]), f"{d['spearman']:.3f}", f"{d['kendall']:.3f}")
        console.print(metrics)
    console.print(f"results in {result.outdir}")
