"""The commands that read finished run folders: rescore, report, export and compare."""

from pathlib import Path
from typing import Annotated

import typer

from chateval.cli.app import REPORT_BAR_DELAY_S, FlagsCommand, app, fail
from chateval.errors import ChatEvalError, ConfigError


@app.command(cls=FlagsCommand, epilog="Example: chateval rescore runs/quickstart runs/systems_quickstart")
def rescore(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="RUN", help="Finished run folders.")],
    label_fraction: Annotated[
        float | None,
        typer.Option(
            "--label-fraction",
            help="Keep the human labels of only this share of the labelled items (seeded, as "
            "data.label_fraction) and score a copy of the run, written to --into.",
        ),
    ] = None,
    into: Annotated[Path | None, typer.Option("--into", help="With --label-fraction: the copy.")] = None,
) -> None:
    """Recompute metrics.json from verdicts.jsonl with the current metric code (no model runs)."""
    from chateval.record.files import RunFolder
    from chateval.run.rescore import rescore as rescore_run
    from chateval.run.rescore import rescore_with_fewer_labels

    try:
        if label_fraction is not None or into is not None:
            if label_fraction is None or into is None or len(run_dirs) != 1:
                raise ConfigError("--label-fraction and --into go together, with one run folder")
            rescore_with_fewer_labels(run_dirs[0], into, label_fraction)
            typer.echo(f"rescored {RunFolder(into).metrics} with {label_fraction:g} of the labels")
            return
        for folder in run_dirs:
            rescore_run(folder)
            files = RunFolder(folder)
            typer.echo(f"rescored {files.metrics}")
            if not files.finished():
                typer.echo(
                    f"note: {folder} has no {files.info.name}: its {files.verdicts.name} was scored with "
                    f"the panel its {files.config.name} names",
                    err=True,
                )
    except ChatEvalError as exc:
        raise fail(exc) from None


@app.command(cls=FlagsCommand, epilog="Example: chateval report runs/systems_quickstart")
def report(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="RUN", help="Finished run folders.")],
    outdir: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--outdir",
            help="Where report.md, its PNGs and report.html go (default: RUN/report for one run, "
            "report/ for several).",
        ),
    ] = None,
    html: Annotated[
        bool,
        typer.Option("--html", hidden=True, help="Earlier releases' switch to report.html: now always."),
    ] = False,
    split_above: Annotated[
        float | None,
        typer.Option(
            "--split-above",
            metavar="MB",
            help="A report.html larger than this (default 8 MB) becomes an index and one page per "
            "item under items/.",
        ),
    ] = None,
) -> None:
    """Write report.md (tables shaped like the paper's, PNG pictures beside it) and report.html
    (one self-contained page to read every debate; several runs of the same data side by side)
    for finished runs."""
    from chateval.core.console import Console
    from chateval.core.progress import Progress
    from chateval.reporting.html import DEFAULT_SPLIT_ABOVE_MB
    from chateval.reporting.report_files import default_outdir, write_reports

    if html:  # kept so that earlier commands still work: what it asked for is written anyway
        typer.echo("note: --html is no longer needed: report writes report.md and report.html", err=True)
    # Shown only when building the items takes long enough to wonder (large runs).
    bar = Progress(Console(), unit="items", delay=REPORT_BAR_DELAY_S, requests=False)
    try:
        written = write_reports(
            run_dirs,
            outdir or default_outdir(run_dirs),
            DEFAULT_SPLIT_ABOVE_MB if split_above is None else split_above,
            bar,
        )
    except ChatEvalError as exc:
        raise fail(exc) from None
    finally:
        bar.close()
    typer.echo(f"report: {written.markdown}")
    if written.html is not None:
        typer.echo(f"report: {written.html}")
    else:
        said = f"note: {written.why_no_html}: no report.html written; `chateval report RUN` writes each run's"
        typer.echo(said, err=True)


@app.command(
    cls=FlagsCommand,
    epilog="Example: chateval export runs/systems_quickstart --what leaderboard -o leaderboard.csv",
)
def export(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder (with verdicts.jsonl).")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file (default: stdout).")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="csv|jsonl|json|parquet",
            help="Default: from the output's suffix (.csv, .jsonl, .json, .parquet), else csv.",
        ),
    ] = None,
    what: Annotated[
        str,
        typer.Option(
            "--what",
            metavar="comparisons|pairs|leaderboard|categories",
            help="comparisons: a row per comparison; pairs, leaderboard: the systems judged; "
            "categories: every figure per category.",
        ),
    ] = "comparisons",
) -> None:
    """Write one row per comparison (pairwise: item and answer order; direct: item) with each
    referee's scores, soft scores and flags, the panel's decision and the human label; or, with
    --what leaderboard or pairs, the systems the run judged, a row per system or pair."""
    from chateval.core.file_access import private_folder
    from chateval.record.files import RunFolder
    from chateval.reporting.export import choose_format, choose_what, export_run, render, write

    try:
        chosen = choose_format(fmt, output)
        result = export_run(run_dir, choose_what(what))
        text = None if output is not None else render(result, chosen)
    except ChatEvalError as exc:
        raise fail(exc) from None
    if not result.finished:
        files = RunFolder(run_dir)
        typer.echo(f"note: {run_dir} has no {files.info.name}; exporting its {files.verdicts.name}", err=True)
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        private_folder(output.parent)
        write(result, chosen, output)
    except ChatEvalError as exc:
        raise fail(exc) from None
    typer.echo(f"exported {len(result.rows)} rows ({result.what}, {chosen}) to {output}")


@app.command(cls=FlagsCommand, epilog="Example: chateval compare runs/judge_a runs/judge_b -o compare")
def compare(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN", help="Two or more finished runs that judged the same items."),
    ],
    outdir: Annotated[
        Path | None,
        typer.Option("-o", "--outdir", help="Write compare.md (and with --html report.html) here."),
    ] = None,
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Also write report.html: the runs side by side, with the comparison (in -o, or ./compare).",
        ),
    ] = False,
) -> None:
    """Compare judges: for every two runs, their agreement with each other (and how many items
    each judged that the other lacks), each one's agreement with the humans on the same items
    (paired), their leaderboards side by side and the items where they differ most; a warning
    when two arguments are one run (the same folder, or a copy of it)."""
    from chateval.core.table_console import table_console
    from chateval.reporting.judges_view import judges_tables, load_runs, write_compare
    from chateval.reporting.measure_views import print_table

    try:
        runs = load_runs(run_dirs)
        tables = judges_tables(runs)
        console = table_console()
        for table in tables:
            print_table(console, table)
        if outdir is not None:
            typer.echo(f"compare: {write_compare(tables, runs, outdir)}")
        if html:
            from chateval.reporting.html import write_html_report

            page = write_html_report(
                run_dirs, outdir or Path("compare"), sections=[("Judges compared", tables)]
            )
            typer.echo(f"report: {page}")
    except ChatEvalError as exc:
        raise fail(exc) from None
