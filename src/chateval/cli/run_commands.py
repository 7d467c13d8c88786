"""The commands that judge: run, preview, check, sweep and bench."""

from pathlib import Path
from typing import Annotated

import typer

from chateval.cli.app import (
    CacheDir,
    ConfigPath,
    FlagsCommand,
    NoCache,
    Overrides,
    Verbose,
    app,
    cache_choice,
    fail,
    stop_on_sigterm,
    stopped,
)
from chateval.errors import BackendError, ChatEvalError


@app.command(cls=FlagsCommand, epilog="Example: chateval run configs/quickstart.yaml --set data.limit=4")
def run(
    config_path: ConfigPath,
    outdir: Annotated[
        Path | None, typer.Option("-o", "--outdir", help="Run folder (default: runs/NAME).")
    ] = None,
    overrides: Overrides = [],  # noqa: B006
    force: Annotated[
        bool, typer.Option("--force", help="Start over, replacing the run folder's results.")
    ] = False,
    cache: CacheDir = None,
    no_cache: NoCache = False,
    verbose: Verbose = False,
) -> None:
    """Run a debate evaluation into its run folder; an unfinished run there is resumed.

    The console shows what loads, one progress bar and the summary; the engines' own output
    goes to engine.log in the run folder (appended on resume) unless --verbose."""
    from chateval.config.files import load_config
    from chateval.core.command_console import command_console
    from chateval.record.files import RunFolder
    from chateval.reporting.summary import print_summary
    from chateval.run.runner import run as run_evaluation

    target: Path | None = outdir
    store = cache_choice(cache, no_cache)
    try:
        with stop_on_sigterm(), command_console(verbose) as out:
            config = load_config(config_path, overrides)
            target = outdir or Path("runs") / config.name

            def to_engine_log(folder: Path, resuming: bool) -> None:
                out.attach(RunFolder(folder).engine_log, append=resuming)

            result = run_evaluation(
                config,
                target,
                force=force,
                progress=out.progress(),
                on_outdir=to_engine_log,
                cache=store,
            )
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (stop_on_sigterm)
        raise stopped(exc, target or "the run folder") from None
    except BackendError as exc:
        typer.secho(
            f"error: {exc}\nfinished steps are saved in the run folder; run the same command again to resume",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(code=1) from None
    except ChatEvalError as exc:
        raise fail(exc) from None
    print_summary(result)


@app.command(
    cls=FlagsCommand, epilog="Example: chateval preview configs/quickstart.yaml --item q01 --swapped"
)
def preview(
    config_path: ConfigPath,
    item: Annotated[
        str | None, typer.Option("--item", help="The item's id (default: the first item).")
    ] = None,
    swapped: Annotated[
        bool, typer.Option("--swapped", help="Pairwise: show answer B first (the second answer order).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The requests as JSON, for tools.")] = False,
    overrides: Overrides = [],  # noqa: B006
) -> None:
    """Print the exact messages each referee receives at each turn of one item's debate, with
    placeholders where earlier utterances go, and the constraint of each verdict request.
    No model is loaded."""
    import json

    from chateval.config.files import load_config
    from chateval.debate.preview import preview as preview_requests
    from chateval.debate.preview import render
    from chateval.run.session import read_judged
    from chateval.run.system_prompts import preview_notes, requests_as_sent, template_prompts

    try:
        config = load_config(config_path, overrides)
        judged = read_judged(config)  # the session's first stage: no model is loaded
        requests = preview_requests(judged.items, judged.panel, config.data.source, item, swapped)
        # Each model's chat template is read from its folder for the system message it is sent.
        prompts, unread = template_prompts(config)
        requests = requests_as_sent(requests, prompts)
    except ChatEvalError as exc:
        raise fail(exc) from None
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in requests], indent=2, ensure_ascii=False))
    else:
        notes = preview_notes(prompts, unread)
        typer.echo(
            "".join(note + "\n" for note in notes) + ("\n" if notes else "") + render(requests), nl=False
        )


@app.command(cls=FlagsCommand, epilog="Example: chateval check configs/gpu/*.yaml --gpu-memory 80")
def check(
    config_paths: Annotated[list[Path], typer.Argument(metavar="CONFIG", help="YAML run configs.")],
    overrides: Annotated[
        list[str],
        typer.Option("--set", help="Override a key in every config: key=value (dotted, YAML value)."),
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
    """Check configs before a GPU is spent: resolve every model (registry name, folder, cached
    hub id), load its tokenizer and config but not its weights, check the backend settings, the
    soft verdicts' score tokens and every item against every model's context, and print what
    the run will cost; on a GPU (or with --gpu-memory), what each vLLM engine's share of it
    leaves for its KV cache. Several configs are checked one after another, each under its
    path. Exit 2 with one line per problem (when any config has one)."""
    several = len(config_paths) > 1
    failed = []
    for config_path in config_paths:
        if several:
            typer.echo(f"== {config_path}")
        if not _check_one(config_path, overrides, gpu_memory, several):
            failed.append(str(config_path))
    if several:
        typer.echo(f"checked {len(config_paths)} configs: {len(config_paths) - len(failed)} ready", nl=False)
        typer.echo(f", {len(failed)} with problems ({', '.join(failed)})" if failed else "")
    if failed:
        raise typer.Exit(code=2)


def _check_one(config_path: Path, overrides: list[str], gpu_memory: float | None, named: bool) -> bool:
    """Check one config and print its report (its problems, each led by its path when
    ``named``: one of several); True when it is ready to run."""
    from chateval.config.files import load_config
    from chateval.run.check import check as check_config
    from chateval.run.check import render_check, render_known

    try:
        config = load_config(config_path, overrides)
    except ChatEvalError as exc:
        fail(exc)  # said in one line, naming the file (with --debug, raised); the others go on
        return False
    report = check_config(config, gpu_memory)
    where = f"{config_path}: " if named else ""
    for problem in report.problems:
        typer.secho(f"error: {where}{problem}", fg=typer.colors.RED, err=True)
    if report.problems:
        typer.echo(render_known(report), nl=False, err=True)
        return False
    typer.echo(render_check(config.name, report), nl=False)
    return True


@app.command(
    cls=FlagsCommand,
    epilog="Example: chateval sweep configs/quickstart.yaml configs/quickstart_direct.yaml -o runs/sweep",
)
def sweep(
    config_paths: Annotated[list[Path], typer.Argument(metavar="CONFIG", help="YAML run configs.")],
    outdir: Annotated[
        Path, typer.Option("-o", "--outdir", help="Root folder; each run goes to OUTDIR/NAME.")
    ],
    overrides: Annotated[
        list[str],
        typer.Option("--set", help="Override a key in every config: key=value (dotted, YAML value)."),
    ] = [],  # noqa: B006
    force: Annotated[bool, typer.Option("--force", help="Overwrite finished run folders.")] = False,
    cache: CacheDir = None,
    no_cache: NoCache = False,
    verbose: Verbose = False,
) -> None:
    """Run several configs in one process, loading each model once (the engines' output goes
    to OUTDIR/engine.log unless --verbose)."""
    store = cache_choice(cache, no_cache)
    from chateval.core.command_console import command_console
    from chateval.record.files import RunFolder
    from chateval.reporting.summary import print_summary
    from chateval.run.sweep import run_sweep

    try:
        with stop_on_sigterm(), command_console(verbose, log_path=RunFolder(outdir).engine_log) as out:
            results = run_sweep(
                config_paths,
                outdir,
                overrides,
                force=force,
                progress=out.progress,  # each run names itself, then shows its bar
                cache=store,
            )
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM: finished runs and steps are kept
        raise stopped(exc, outdir) from None
    except ChatEvalError as exc:
        raise fail(exc) from None
    for result in results:
        print_summary(result)


@app.command(
    cls=FlagsCommand,
    epilog="Example: chateval bench configs/quickstart.yaml --sequential-items 4 --extra barrier",
)
def bench(
    config_path: ConfigPath,
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
    overrides: Annotated[
        list[str], typer.Option("--set", help="Override a config key: key=value (dotted, YAML value).")
    ] = [],  # noqa: B006
    verbose: Verbose = False,
) -> None:
    """Measure a debate workload: sequential vs scheduled vs the engine's limit, same engines
    (the engines' output goes to NAME.engine.log beside the report unless --verbose)."""

    from chateval.bench.modes import run_bench
    from chateval.config.files import load_config
    from chateval.core.command_console import command_console
    from chateval.core.textfile import write_json

    try:
        with command_console(verbose) as out:
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
        raise fail(exc) from None
    write_json(target, report)
    from chateval.reporting.summary import print_bench

    print_bench(report)
    typer.echo(f"saved {target}")
