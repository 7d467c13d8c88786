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


@app.command(cls=FlagsCommand)
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


@app.command(cls=FlagsCommand)
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


@app.command(cls=FlagsCommand)
def check(
    config_path: ConfigPath,
    overrides: Overrides = [],  # noqa: B006
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
    from chateval.run.check import render_check, render_known

    try:
        config = load_config(config_path, overrides)
    except ChatEvalError as exc:
        raise fail(exc) from None
    report = check_config(config, gpu_memory)
    for problem in report.problems:
        typer.secho(f"error: {problem}", fg=typer.colors.RED, err=True)
    if report.problems:
        typer.echo(render_known(report), nl=False, err=True)
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


@app.command(cls=FlagsCommand)
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
    overrides: Annotated[list[str], typer.Option("--set", help="Override a config key: key=value.")] = [],  # noqa: B006
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
