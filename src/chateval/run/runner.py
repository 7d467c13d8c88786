"""One evaluation run, from a validated config to a written run folder.

config -> items -> panel + debates -> scheduler (backends) -> transcripts -> verdicts ->
aggregate -> metrics -> files.
"""

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chateval.backends.replicas import ReplicaSet
from chateval.config.files import dump_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.progress import Progress
from chateval.core.schema.records import RunInfo
from chateval.core.transcript import Debate, Utterance
from chateval.core.usage import ModelUsage, Usage
from chateval.debate.building import build_debates, check_soft_verdicts
from chateval.debate.scheduler import Scheduler, StepCallback
from chateval.engines.factory import (
    TokenizerOnly,
    backend_name,
    remote_models,
    replica_count,
)
from chateval.engines.models import ModelRegistry
from chateval.engines.placement import BackendFactory, backend_loader, default_backend_factory, plan_placement
from chateval.engines.pool import ModelPool
from chateval.errors import DataError
from chateval.evaluation.run_metrics import RunMetrics, compute_metrics
from chateval.run import journal
from chateval.run.adaptive import AdaptiveRun
from chateval.run.folder import RunFolder, prepare_outdir
from chateval.run.records import item_records, stopped_early, transcript_record
from chateval.run.session import open_session
from chateval.version import __version__

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a finished run wrote: its folder, run.json's counts and metrics.json's numbers."""

    outdir: Path
    run_info: RunInfo
    metrics: RunMetrics | None


def _replay(state: journal.JournalState, debates: Sequence[Debate], path: Path) -> None:
    """Put the journal's complete steps back into the debates' transcripts."""
    by_key = {d.key: d for d in debates}
    unknown = sorted(set(state.utterances) - set(by_key))
    if unknown:
        raise DataError(
            f"{path}: debates {unknown[:3]} are not in this run's data; pass --force to start over"
        )
    for key, utterances in state.utterances.items():
        for utterance in utterances:
            if utterance.turn.is_summary and utterance.turn.agent is None:
                raise DataError(
                    f"{path}: written by a release whose one summary served the whole panel; this "
                    "release gives each referee its own summaries: pass --force to start over"
                )
            by_key[key].transcript = by_key[key].transcript.add(utterance)


def _served_by(
    config: RunConfig, models: Sequence[str], registry: ModelRegistry | None, given: Mapping[str, Backend]
) -> dict[str, tuple[str, int]]:
    """What served each model and on how many replicas: a backend handed in by its class
    (``ScriptedBackend``: scripted), else its registry entry's or the config's backend."""
    out = {}
    for model in models:
        if model in given:
            out[model] = (type(given[model]).__name__.removesuffix("Backend").lower() or "given", 1)
        elif registry is None:  # a caller's backend factory: the config says which kind
            out[model] = (config.backend, 1)
        else:
            out[model] = (backend_name(config, model, registry), replica_count(config, model, registry))
    return out


def _items_text(config: RunConfig, n: int) -> str:
    """What the run judges, for its first log line."""
    if config.data.design().adaptive is not None:
        return f"{n} candidate comparisons"  # the adaptive design says how many it may debate
    orders = config.task == "pairwise" and config.position_calibration
    return f"{n} item{'' if n == 1 else 's'}" + (
        f" in both answer orders ({2 * n} debates)" if orders else ""
    )


def run(
    config: RunConfig,
    outdir: Path | str,
    *,
    force: bool = False,
    backends: Mapping[str, Backend] | None = None,
    backend_factory: BackendFactory = default_backend_factory,
    on_step: StepCallback | None = None,
    progress: Progress | None = None,
    on_outdir: Callable[[Path, bool], None] | None = None,
) -> RunResult:
    """Run ``config`` and write its run folder; ``backends`` may be given (tests, sweeps).

    ``progress``: the run's bar (debates finished of all); ``on_outdir(folder, resuming)`` is
    called once the run folder is ready, before any model loads (the CLI sends the engines'
    output to its engine.log from then on).
    """
    outdir = Path(outdir)
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    session = open_session(config, backends, backend_factory)
    items, panel, models, registry = session.items, session.panel, session.models, session.registry
    resuming = prepare_outdir(outdir, force, dump_config(config))
    files = RunFolder(outdir)
    if on_outdir is not None:
        on_outdir(outdir, resuming)
    log.info(
        "%s %s: %s, %d referees x %d rounds (%s), into %s",
        "resuming" if resuming else "run",
        config.name,
        _items_text(config, len(items)),
        len(panel.agents),
        config.rounds,
        config.strategy,
        outdir,
    )

    placement = plan_placement(config, registry, backends or {})
    bar = progress or Progress()
    pool = ModelPool(
        models,
        backend_loader(config, backend_factory, registry, placement),
        placement.mode,
        backends,
        pinned=remote_models(config, registry) if registry else (),
        # Phased: the bar names the model loaded now.
        on_load=bar.set_model if placement.mode == "phased" else None,
    )
    try:
        pool.start()
        counters = {
            m: pool.get(m) if m in pool.resident() or registry is None else TokenizerOnly(m, registry)
            for m in models
        }
        if config.verdict.soft:
            check_soft_verdicts(panel, counters)
        items, truncations = session.fit(counters)
        debates = build_debates(items, config.task == "pairwise" and config.position_calibration)
        scheduler = Scheduler(pool, on_step, bar)
        journal_path = files.journal
        state = journal.load(journal_path) if resuming else journal.JournalState()
        if resuming:
            _replay(state, debates, journal_path)
            journal.truncate_to_complete(journal_path, state)
            scheduler.usage = Usage(steps=state.steps_done, per_model=state.usage)

        def record_step(
            index: int, added: list[tuple[Debate, Utterance]], usage: dict[str, ModelUsage]
        ) -> None:
            journal.append_step(journal_path, index, [(d.key, u) for d, u in added], usage)

        def record_debate_step(
            index: int, debate: Debate, added: list[Utterance], usage: dict[str, ModelUsage]
        ) -> None:
            journal.append_step(journal_path, index, [(debate.key, u) for u in added], usage, debate.key)

        journaled = {d.key: state.debate_progress(d.key) for d in debates}
        streaming = config.scheduling != "barrier" and scheduler.can_stream(models)
        if config.scheduling == "streaming" and not streaming:
            log.warning("scheduling: streaming needs co-resident vLLM engines; running with step barriers")
        # The adaptive design: only the waves of items it chooses are debated, as it chooses them.
        adaptive = (
            AdaptiveRun(config, debates, panel, journal_path, state)
            if config.data.design().adaptive
            else None
        )
        first = adaptive.first() if adaptive else debates
        on_debate_done = adaptive.on_debate_done if adaptive else None
        debate_started = time.perf_counter()
        if streaming:
            usage = scheduler.run_streaming(
                panel,
                first,
                progress=journaled,
                on_debate_step=record_debate_step,
                on_debate_done=on_debate_done,
            )
        else:
            usage = scheduler.run(
                panel,
                first,
                progress=journaled,
                on_step_done=adaptive.journal_step if adaptive else record_step,
                on_debate_done=on_debate_done,
            )
        debate_seconds = time.perf_counter() - debate_started
        if adaptive is not None:
            debates = adaptive.chosen_debates()
            items = list({d.item.id: d.item for d in debates}.values())
        on_replicas = {m: pool.get(m) for m in pool.resident()}
        replicas = {m: b.replica_stats() for m, b in on_replicas.items() if isinstance(b, ReplicaSet)}
    finally:
        bar.close()  # the bar's last state stays on the console
        pool.close()

    records = item_records(debates, panel)
    for record in records:
        cuts = truncations.get(record["item_id"])
        record["truncated"] = {c.model: c.fields for c in cuts} if cuts else None
    names = [agent.name for agent in panel.agents]
    files.write_transcripts(transcript_record(d, names) for d in debates)
    files.write_verdicts(records)

    metrics = compute_metrics(config, records)
    files.write_metrics(metrics)

    total = usage.total()
    served_by = _served_by(config, models, registry, backends or {})
    run_info: RunInfo = {
        "chateval_version": __version__,
        "name": config.name,
        "task": config.task,
        "backend": "+".join(sorted({kind for kind, _ in served_by.values()})),
        "backends": {m: f"{kind} ({n} replicas)" if n > 1 else kind for m, (kind, n) in served_by.items()},
        "strategy": config.strategy,
        "agents": len(panel.agents),
        "rounds": config.rounds,
        "items": len(items),
        "debates": len(debates),
        "position_calibration": config.task == "pairwise" and config.position_calibration,
        "scheduling": "streaming" if streaming else "barrier",
        "early_stopped_debates": sum(1 for d in debates if stopped_early(d)),
        "steps": usage.steps,
        "batches": total.batches,
        "engine_steps": total.engine_steps,
        "requests": total.requests,
        "prompt_tokens": total.prompt_tokens,
        "cached_prompt_tokens": total.cached_prompt_tokens,
        "generated_tokens": total.generated_tokens,
        "verdict_parse_failures": sum(r["parse_failures"] for r in records),
        "truncated_items": len(truncations),
        "per_model": {name: u.counts() for name, u in usage.per_model.items()},
        "placement": {
            **pool.info(),
            "reason": placement.reason,
            "need_gib": placement.need_gib,
            "free_gib": placement.free_gib,
        },
        "model_load_seconds": round(pool.load_seconds, 3),
        "debate_seconds": round(debate_seconds, 3),
        "wall_seconds": round(time.perf_counter() - started, 3),
        "started_at": started_at,
        "resumed": resuming,
    }
    if replicas:
        run_info["replicas"] = replicas
    if adaptive is not None:
        run_info["adaptive"] = adaptive.info()
    files.write_info(run_info)
    return RunResult(outdir, run_info, metrics)
