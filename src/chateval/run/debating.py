"""A run's debate stage: the scheduler runs the debates on the pool's engines, every finished
step is journaled (so a killed run resumes from it), a resumed run replays its journal first,
and the adaptive design, when the config has one, chooses which debates run."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chateval.backends.replicas import ReplicaSet
from chateval.core.backend import Backend
from chateval.core.items import Item
from chateval.core.progress import Progress
from chateval.core.transcript import Debate, Utterance
from chateval.core.usage import ModelUsage, Usage
from chateval.debate.scheduler import Scheduler, StepCallback, StepDone
from chateval.engines.pool import ModelPool
from chateval.errors import DataError
from chateval.record import journal
from chateval.run.adaptive import AdaptiveRun
from chateval.run.reuse import Reuse
from chateval.run.session import Prepared, Session
from chateval.schema.run_info import AdaptiveInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Debated:
    """What the debate stage ran: the debates (the adaptive design's chosen ones) and their
    items, what it cost, and how it was scheduled."""

    debates: list[Debate]
    items: list[Item]
    usage: Usage
    streaming: bool
    seconds: float
    replicas: dict[str, list[dict[str, Any]]]  # per model on several replicas: each one's stats
    adaptive: AdaptiveInfo | None
    reuse: Reuse | None  # the judgment store's part: what the run took from it


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


def _say_replayed(state: journal.JournalState) -> None:
    """Say what a resumed run took from its journal (the bar starts past it, and its requests
    and rates count this session's only)."""
    requests = sum(usage.requests for usage in state.usage.values())
    log.info(
        "replayed from the journal: %d requests in %d debates, not sent again",
        requests,
        sum(1 for utterances in state.utterances.values() if utterances),
    )


def run_debates(
    session: Session,
    prepared: Prepared,
    pool: ModelPool,
    journal_path: Path,
    resuming: bool,
    bar: Progress,
    on_step: StepCallback | None = None,
    reuse: Reuse | None = None,
) -> Debated:
    """Run ``prepared``'s debates on ``pool``, journaling each step to ``journal_path`` (and,
    when ``resuming``, replaying it first); with ``reuse``, the debates its judgment store
    holds are taken from it, and every debate judged now is kept there as it ends."""
    config, panel, debates = session.config, session.panel, prepared.debates
    scheduler = Scheduler(pool, on_step, bar)
    state = journal.load(journal_path) if resuming else journal.JournalState()
    if not journal_path.exists():  # a new run, or one killed before its first step
        journal.start(journal_path, session.inputs)
    if resuming:
        _replay(state, debates, journal_path)
        journal.truncate_to_complete(journal_path, state)
        scheduler.usage = Usage(steps=state.steps_done, per_model=state.usage)

    def record_step(index: int, added: list[tuple[Debate, Utterance]], usage: dict[str, ModelUsage]) -> None:
        journal.append_step(journal_path, index, [(d.key, u) for d, u in added], usage)

    def record_debate_step(
        index: int, debate: Debate, added: list[Utterance], usage: dict[str, ModelUsage]
    ) -> None:
        journal.append_step(journal_path, index, [(debate.key, u) for u in added], usage, debate.key)
        if reuse is not None:
            reuse.keep_ended([debate], index)

    journaled = {d.key: state.debate_progress(d.key) for d in debates}
    if resuming:
        _say_replayed(state)
    if reuse is not None:
        reuse.take(debates, journaled)
        if reuse.reused:
            log.info(
                "judgment store: %d debates judged before taken from it, not judged again", len(reuse.reused)
            )
    streaming = config.scheduling != "barrier" and scheduler.can_stream(session.models)
    if config.scheduling == "streaming" and not streaming:
        log.warning("scheduling: streaming needs co-resident vLLM engines; running with step barriers")
    # The adaptive design: only the waves of items it chooses are debated, as it chooses them.
    adaptive = None
    if config.data.design().adaptive:
        adaptive = AdaptiveRun(config, debates, panel, journal_path, state)
    first = adaptive.first() if adaptive else debates
    on_debate_done = adaptive.on_debate_done if adaptive else None
    started = time.perf_counter()
    if streaming:
        usage = scheduler.run_streaming(
            panel, first, progress=journaled, on_debate_step=record_debate_step, on_debate_done=on_debate_done
        )
    else:
        on_step_done = _keeping(adaptive.journal_step if adaptive else record_step, reuse)
        usage = scheduler.run(
            panel, first, progress=journaled, on_step_done=on_step_done, on_debate_done=on_debate_done
        )
    seconds = time.perf_counter() - started
    items = prepared.items
    if adaptive is not None:
        debates = adaptive.chosen_debates()
        items = list({d.item.id: d.item for d in debates}.values())
    return Debated(
        debates,
        items,
        usage,
        streaming,
        seconds,
        _replica_stats({m: pool.get(m) for m in pool.resident()}),
        adaptive.info() if adaptive else None,
        reuse,
    )


def _keeping(on_step_done: StepDone, reuse: Reuse | None) -> StepDone:
    """``on_step_done``, then each debate that ended with the step kept in the judgment store."""
    if reuse is None:
        return on_step_done

    def step_done(index: int, added: list[tuple[Debate, Utterance]], usage: dict[str, ModelUsage]) -> None:
        on_step_done(index, added, usage)
        reuse.keep_ended({d.key: d for d, _ in added}.values(), index)

    return step_done


def _replica_stats(resident: dict[str, Backend]) -> dict[str, list[dict[str, Any]]]:
    return {m: b.replica_stats() for m, b in resident.items() if isinstance(b, ReplicaSet)}
