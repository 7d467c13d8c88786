"""``chateval import``: another tool's verdicts as a run folder (chateval.run.importing)."""

from pathlib import Path
from typing import Annotated

import typer

from chateval.cli.app import FlagsCommand, app, fail
from chateval.errors import ChatEvalError


@app.command(
    name="import",
    cls=FlagsCommand,
    epilog="Example: chateval import configs/import/mt_bench_pairwise.yaml -o runs/mt_bench",
)
def import_judgments(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML import config.")],
    outdir: Annotated[
        Path | None, typer.Option("-o", "--outdir", help="Run folder (default: runs/NAME).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a finished run folder's results.")] = False,
) -> None:
    """Read another tool's pairwise verdicts (MT-Bench's model judgments, JudgeBench's outputs,
    AlpacaEval's annotations, Arena-Hard's model judgments, a JSONL of your own),
    direct scores (`task: direct`: MT-Bench's single grading) or ChatEval's own 2023 outputs
    (`format: chateval_2023`) into a run folder that rescore, report, export and compare read as
    any run's. Every record
    is checked first: a bad one is one line naming the file, the record and the field, and
    nothing is written. No model runs."""
    from chateval.reporting.summary import print_summary
    from chateval.run.import_any import import_any

    try:
        result = import_any(config_path, outdir, force)
    except ChatEvalError as exc:
        raise fail(exc) from None
    print_summary(result)
