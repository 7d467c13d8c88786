"""One evaluation run, from a validated config to a written run folder.

config -> items -> panel + debates -> scheduler (backends) -> transcripts -> verdicts ->
aggregate -> metrics -> files.
"""

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chateval.config.files import dump_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.progress import Progress
from chateval.debate.scheduler import StepCallback
from chateval.engines.caller_engines import BackendFactory
from chateval.errors import ConfigError
from chateval.evaluation.run_metrics import compute_metrics
from chateval.record import journal
from chateval.record.files import RunFolder
from chateval.record.items import records_of_items
from chateval.run.debating import run_debates
from chateval.run.outdir import prepare_outdir
from chateval.run.records import item_records, mark_truncated, transcript_record
from chateval.run.reuse import CacheChoice, open_reuse, store_folder
from chateval.run.run_info import RunTimes, run_info
from chateval.run.session import Session, open_session
from chateval.schema.run_info import RunInfo
from chateval.schema.run_metrics import RunMetrics

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a finished run wrote: its folder, run.json's counts and metrics.json's numbers."""

    outdir: Path
    run_info: RunInfo
    metrics: RunMetrics | None


def _items_text(config: RunConfig, n: int) -> str:
    """What the run judges, for its first log line."""
    if config.data.design().adaptive is not None:
        return f"{n} candidate comparisons"  # the adaptive design says how many it may debate
    return f"{n} item{'' if n == 1 else 's'}" + (
        f" in both answer orders ({2 * n} debates)" if config.calibrated else ""
    )


def run(
    config: RunConfig,
    outdir: Path | str,
    *,
    force: bool = False,
    backends: Mapping[str, Backend] | None = None,
    backend_factory: BackendFactory | None = None,
    on_step: StepCallback | None = None,
    progress: Progress | None = None,
    on_outdir: Callable[[Path, bool], None] | None = None,
    session: Session | None = None,
    cache: CacheChoice | None = None,
) -> RunResult:
    """Run ``config`` and write its run folder; ``backends`` may be given (tests, sweeps).

    ``backends``: ready backends by model name, used instead of loading those models;
    ``backend_factory(config, model)``: builds the others, instead of the model registry's
    engines. ``on_step(step, steps, requests)``: called before each debate step.
    ``progress``: the run's bar (debates finished of all); ``on_outdir(folder, resuming)`` is
    called once the run folder is ready, before any model loads (the CLI sends the engines'
    output to its engine.log from then on). ``session``: the config's session, opened already
    (a sweep opens every config's before the first run); by default the run opens its own.
    ``cache``: the judgment store (True: the default place; a folder; False: none); by default
    the config's ``cache`` (chateval.run.reuse).
    The folder is locked while the run writes it: another command writing it is refused before
    any model loads (chateval.record.lock).
    """
    outdir = Path(outdir)
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    files = RunFolder(outdir)
    with ExitStack() as held:
        # A folder there already may be another command's: refused at once, before the config's
        # tokenizers are read; a new one is made once the config is checked (the second hold
        # is the first's, when there is one).
        if files.path.is_dir():
            held.enter_context(files.writing("chateval run"))
        session = session or open_session(config, backends, backend_factory)
        held.enter_context(files.writing("chateval run"))
        choice = config.cache if cache is None else cache
        return _run_into(files, session, force, started, started_at, on_step, progress, on_outdir, choice)


def _run_into(
    files: RunFolder,
    session: Session,
    force: bool,
    started: float,
    started_at: str,
    on_step: StepCallback | None,
    progress: Progress | None,
    on_outdir: Callable[[Path, bool], None] | None,
    cache: CacheChoice,
) -> RunResult:
    """The run, its folder's writer lock held: the folder prepared (or resumed), the debates
    run and journaled (those the judgment store holds taken from it), the records written."""
    outdir, config = files.path, session.config
    hint = (
        "pass --force to judge it again (every debate the judgment store holds is reused, not "
        "judged again), or write to another folder"
        if store_folder(cache) is not None
        else "pass --force to overwrite it"
    )
    resuming = prepare_outdir(outdir, force, dump_config(config), hint)
    if resuming and (changed := journal.changed_inputs(files.journal, session.inputs)):
        raise ConfigError(
            f"{outdir} holds an unfinished run whose input files changed since it started "
            f"({', '.join(changed)}): its debates so far judged the earlier contents; restore them "
            "to resume, or pass --force to start over"
        )
    if on_outdir is not None:
        on_outdir(outdir, resuming)
    _log_start(session, outdir, resuming)
    bar = progress or Progress()
    # Phased: the bar names the model loaded now.
    pool = session.pool(on_load=bar.set_model if session.placement.mode == "phased" else None)
    reuse = None
    try:
        pool.start()
        prepared = session.prepare(session.counters(pool))
        reuse = open_reuse(session, cache, outdir, started_at)
        debated = run_debates(session, prepared, pool, files.journal, resuming, bar, on_step, reuse)
    finally:
        bar.close()  # the bar's last state stays on the console
        pool.close()
        if reuse is not None:
            reuse.close()

    records = item_records(debated.debates, session.panel)
    mark_truncated(records, prepared.truncations)
    names = [agent.name for agent in session.panel.agents]
    files.write_roster(session.roster(prepared.system_prompts))
    files.write_items(records_of_items(debated.items))
    files.write_transcripts(
        transcript_record(d, names, reuse.reused_from(d) if reuse else None) for d in debated.debates
    )
    files.write_verdicts(records)
    metrics = compute_metrics(session.statistics(), records)
    files.write_metrics(metrics)
    times = RunTimes(started_at, time.perf_counter() - started)
    info = run_info(session, prepared, debated, records, pool, times, resuming)
    files.write_info(info)
    return RunResult(outdir, info, metrics)


def _log_start(session: Session, outdir: Path, resuming: bool) -> None:
    """The run's first log line: what it judges, with whom, into which folder."""
    config = session.config
    log.info(
        "%s %s: %s, %d referees x %d rounds (%s), into %s",
        "resuming" if resuming else "run",
        config.name,
        _items_text(config, len(session.items)),
        len(session.panel.agents),
        config.rounds,
        config.strategy,
        outdir,
    )
