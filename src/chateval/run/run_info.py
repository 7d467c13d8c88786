"""run.json: what a run ran, how, and what it cost, built from its stages' results."""

from collections.abc import Sequence
from dataclasses import dataclass

from chateval.engines.pool import ModelPool
from chateval.record.migrations import FORMAT_VERSION
from chateval.run.debating import Debated
from chateval.run.records import stopped_early
from chateval.run.session import Prepared, Session
from chateval.schema.run_info import RunInfo
from chateval.schema.verdicts import VerdictRecord
from chateval.version import __version__


@dataclass(frozen=True)
class RunTimes:
    """When the run started and how long it took, in all."""

    started_at: str  # ISO 8601, UTC
    wall_seconds: float


def run_info(
    session: Session,
    prepared: Prepared,
    debated: Debated,
    records: Sequence[VerdictRecord],
    pool: ModelPool,
    times: RunTimes,
    resumed: bool,
) -> RunInfo:
    """run.json: what ran, how, and what it cost."""
    config, panel, placement = session.config, session.panel, session.placement
    served_by = session.served_by()
    usage = debated.usage
    total = usage.total()
    info: RunInfo = {
        "format_version": FORMAT_VERSION,
        "chateval_version": __version__,
        "name": config.name,
        "task": config.task,
        "backend": "+".join(sorted({kind for kind, _ in served_by.values()})),
        "backends": {m: f"{kind} ({n} replicas)" if n > 1 else kind for m, (kind, n) in served_by.items()},
        "strategy": config.strategy,
        "agents": len(panel.agents),
        "referees": session.referees,
        "summarizer_model": session.summarizer_model,
        "rounds": config.rounds,
        "items": len(debated.items),
        "debates": len(debated.debates),
        "position_calibration": config.calibrated,
        "scheduling": "streaming" if debated.streaming else "barrier",
        "early_stopped_debates": sum(1 for d in debated.debates if stopped_early(d)),
        "steps": usage.steps,
        "batches": total.batches,
        "engine_steps": total.engine_steps,
        "requests": total.requests,
        "prompt_tokens": total.prompt_tokens,
        "cached_prompt_tokens": total.cached_prompt_tokens,
        "generated_tokens": total.generated_tokens,
        "verdict_parse_failures": sum(r["parse_failures"] for r in records),
        "truncated_items": len(prepared.truncations),
        "per_model": {name: u.counts() for name, u in usage.per_model.items()},
        "placement": {
            **pool.info(),
            "reason": placement.reason,
            "need_gib": placement.need_gib,
            "free_gib": placement.free_gib,
        },
        "model_load_seconds": round(pool.load_seconds, 3),
        "debate_seconds": round(debated.seconds, 3),
        "wall_seconds": round(times.wall_seconds, 3),
        "started_at": times.started_at,
        "resumed": resumed,
        "inputs": dict(session.inputs),
    }
    if debated.replicas:
        info["replicas"] = debated.replicas
    if debated.adaptive is not None:
        info["adaptive"] = debated.adaptive
    if debated.reuse is not None:
        info["judgment_store"] = debated.reuse.info(debated.debates)
    return info
