"""``chateval bench``: one debate workload run several ways on the same loaded engines.

- ``sequential``: one request at a time, item by item, agent by agent (ChatEval's original
  loop); may run on N items spread over the data and be priced for the whole workload with a
  per-request cost model fitted on them (it says so; see ``chateval.bench.request_cost``).
- ``scheduled``: the project's scheduler, as a normal run does it (streaming when possible).
- ``limit``: the exact requests ``scheduled`` made, all in one call with no dependencies: the
  best this engine can do on this token load.
- optional comparisons: ``barrier`` (scheduler with step barriers), a prompt layout name
  (``conversation``, ``shared_first``, ``role_first``: scheduled with that layout), ``early_stop``
  (scheduled with early stopping: compute saved and the change in metrics).

The prefix cache is reset before every mode, so no mode profits from another's prompts.
"""

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chateval.bench.measure import ModeResult, RecordingBackend, measure, recording
from chateval.bench.request_cost import TimedRequest, fit_per_model, price, spread_indices
from chateval.config.run import RunConfig
from chateval.core.backend import Backend, GenerationRequest, GenerationResult
from chateval.core.progress import Progress
from chateval.core.transcript import Debate
from chateval.debate.building import build_debates, build_panel
from chateval.debate.panel import Panel
from chateval.debate.scheduler import Scheduler
from chateval.engines.pool import ModelPool
from chateval.errors import ConfigError
from chateval.evaluation.run_metrics import compute_metrics
from chateval.prompts.builder import PROMPT_LAYOUTS
from chateval.reporting.metrics_view import PairwiseView, metrics_view
from chateval.run.records import item_records, stopped_early
from chateval.run.session import Prepared, Session, open_session
from chateval.run.statistics import statistics_settings
from chateval.schema.run_metrics import RunMetrics

# Variants of the config measured beside it: a prompt layout, or one of these.
VARIANTS: dict[str, dict[str, Any]] = {
    "early_stop": {"early_stop": True},
    # Verdicts without the assessment first (scores, then one line of evidence).
    "scores_first": {"verdict": {"reasoning": False}},
    # Verdicts without their scores' probabilities (what soft verdicts cost).
    "hard_only": {"verdict": {"soft": False}},
    # The default before faithful debates: compact layout, scores-first and hard verdicts.
    "compact_scores_first": {"prompt_layout": "compact", "verdict": {"reasoning": False, "soft": False}},
    **{layout: {"prompt_layout": layout} for layout in PROMPT_LAYOUTS},
}
EXTRA_MODES = ("barrier", *VARIANTS)
ENGINE_ENV_PREFIXES = ("VLLM_", "OMP_", "CUDA_VISIBLE_DEVICES")
TIMED_REQUEST_COLUMNS = ("item", "model", "computed_prompt_tokens", "generated_tokens", "seconds")
# A cost model has three coefficients: fewer timed requests than this cannot pin them down.
MIN_TIMED_REQUESTS = 6


def _timed(result: GenerationResult, seconds: float = 0.0) -> TimedRequest:
    return TimedRequest(result.prompt_tokens - result.cached_prompt_tokens, result.generated_tokens, seconds)


def _sequential(
    panel: Panel,
    debates: Sequence[Debate],
    pool: ModelPool,
    timed: list[tuple[str, str, TimedRequest]],
    bar: Progress,
) -> None:
    """ChatEval's loop: every request alone, debate after debate, turn after turn.

    Each request goes into ``timed`` as (item id, model, its tokens and wall seconds).
    """
    plan = panel.plan()
    bar.start(len(debates), work_total=len(debates) * len(plan), work_done=0)
    with contextlib.closing(bar):
        for debate in debates:
            for step in plan:
                turns = panel.due(debate, step)
                results = []
                for turn in turns:
                    request = panel.request(debate, turn)
                    started = time.perf_counter()
                    [result] = pool.get(request.model).generate([request])
                    seconds = time.perf_counter() - started
                    timed.append((debate.item.id, request.model, _timed(result, seconds)))
                    results.append(result)
                    bar.add_requests(1, result.generated_tokens)
                panel.advance(debate, step, turns, results)
                bar.update(work=1)
            bar.update(1)


def _price_sequential(
    sequential: ModeResult,
    scheduled: ModeResult,
    timed: Sequence[tuple[str, str, TimedRequest]],
    workload: Sequence[tuple[str, TimedRequest]],
    measured_items: list[int],
    total_items: int,
) -> None:
    """Turn a ``sequential`` measured on some items into an estimate for the whole workload.

    Per model, a cost model fitted on the timed requests prices every request the scheduled
    run made: the same prompts a full sequential run would send, and under greedy decoding
    (nearly always) the same answers. The computed prompt tokens are the scheduled run's; a
    sequential run's prefix cache may find a little more or less. The measured figures and
    the plain scaling by requests stay in the report beside the estimate.
    """
    costs = fit_per_model((model, request) for _, model, request in timed)
    for model in {model for model, _ in workload}:
        made = costs[model].fitted_on if model in costs else 0
        if made < MIN_TIMED_REQUESTS:
            raise ConfigError(
                f"--sequential-items {len(measured_items)}: the measured items made {made} requests "
                f"to model {model!r}, too few to price its requests (at least {MIN_TIMED_REQUESTS}); "
                "measure more items"
            )
    by_requests = sequential.seconds * scheduled.requests / max(sequential.requests, 1)
    sequential.extra |= {
        "measured_items": measured_items,
        "measured_seconds": round(sequential.seconds, 3),
        "measured_requests": sequential.requests,
        "measured_prompt_tokens": sequential.prompt_tokens,
        "measured_generated_tokens": sequential.generated_tokens,
        "measured_cached_tokens": sequential.cached_prompt_tokens,
        "seconds_scaled_by_requests": round(by_requests, 3),
        "cost_model": {model: cost.as_dict() for model, cost in costs.items()},
    }
    sequential.note = (
        f"measured on {len(measured_items)} of {total_items} items (spread); seconds priced per "
        "request by a cost model fitted on them, token counts those of scheduled"
    )
    sequential.seconds = price(costs, workload)
    sequential.requests = scheduled.requests
    sequential.prompt_tokens = scheduled.prompt_tokens
    sequential.generated_tokens = scheduled.generated_tokens
    sequential.cached_prompt_tokens = scheduled.cached_prompt_tokens


def _scheduled(
    panel: Panel, debates: Sequence[Debate], pool: ModelPool, streaming: bool, bar: Progress
) -> None:
    scheduler = Scheduler(pool, progress=bar)
    with contextlib.closing(bar):
        if streaming:
            scheduler.run_streaming(panel, debates)
        else:
            scheduler.run(panel, debates)


def _limit(
    backends: Sequence[RecordingBackend], requests: dict[str, list[GenerationRequest]], bar: Progress
) -> None:
    bar.start(sum(map(len, requests.values())))
    with contextlib.closing(bar):
        for backend in backends:
            results = backend.generate(requests[backend.model])
            bar.update(len(results), len(results))
            bar.add_requests(len(results), sum(r.generated_tokens for r in results))


@dataclass(frozen=True)
class _Bench:
    """What every mode runs on: the session, its fitted items, the recorded engines."""

    session: Session
    prepared: Prepared  # the fitted items and the scheduled mode's debates
    pool: ModelPool
    recorders: list[RecordingBackend]
    streaming: bool
    bar: Callable[[str, str], Progress]


def run_bench(
    config: RunConfig,
    *,
    sequential_items: int | None = None,
    extra_modes: Sequence[str] = (),
    on_mode: Callable[[str], None] | None = None,
    backends: Mapping[str, Backend] | None = None,
    progress: Callable[[str], Progress] | None = None,
) -> dict[str, Any]:
    """Run the workload of ``config`` in every mode on the same engines; return the report.

    ``backends`` (tests) are used as given and stay open; otherwise the config's models are
    loaded co-resident and closed at the end. ``progress(unit)`` makes each mode's bar.
    """

    def bar(mode: str, unit: str) -> Progress:
        return progress(f"{mode}: {unit}") if progress is not None else Progress()

    def announce(mode: str) -> None:
        if on_mode is not None:
            on_mode(mode)

    _check_modes(config, extra_modes)
    session = open_session(config, backends)  # bad data, names or settings fail before a model loads
    if session.placement.mode != "co_resident":
        raise ConfigError(
            "bench runs every mode on loaded engines; the models do not fit together "
            f"({session.placement.reason})"
        )
    engines = session.pool()
    try:
        engines.start()
        recorders = [recording(engines.get(model)) for model in session.models]
        pool = ModelPool.fixed({r.model: r for r in recorders})
        prepared = session.prepare(pool.preloaded)
        streaming = config.scheduling != "barrier" and Scheduler(pool).can_stream(session.models)
        bench = _Bench(session, prepared, pool, recorders, streaming, bar)
        announce("scheduled")
        scheduled = _scheduled_mode(bench)
        metrics = compute_metrics(session.statistics(), item_records(scheduled.debates, session.panel))
        announce("limit")
        modes = [scheduled.result, _limit_mode(bench, scheduled.requests)]
        announce("sequential")
        modes.append(_sequential_mode(bench, scheduled, sequential_items))
        for extra in extra_modes:
            announce(extra)
            modes.append(_variant_mode(bench, extra, scheduled.result))
    finally:
        engines.close()  # the loaded engines; given ones stay open
    return _report(session, len(prepared.items), len(scheduled.debates), modes, metrics)


def _check_modes(config: RunConfig, extra_modes: Sequence[str]) -> None:
    if config.prompt_layout in extra_modes:
        raise ConfigError(
            f"--extra {config.prompt_layout}: that is the config's own layout, measured as scheduled"
        )
    unknown = set(extra_modes) - set(EXTRA_MODES)
    if unknown:
        raise ConfigError(f"unknown bench modes {sorted(unknown)}; known: {', '.join(EXTRA_MODES)}")


@dataclass(frozen=True)
class _Scheduled:
    """The scheduled mode: its measure, its debates, and the requests it made per model
    (with each one's tokens, the workload a partial sequential mode is priced on)."""

    result: ModeResult
    debates: list[Debate]
    requests: dict[str, list[GenerationRequest]]
    workload: list[tuple[str, TimedRequest]]


def _scheduled_mode(bench: _Bench) -> _Scheduled:
    """The project's scheduler, as a run does it."""
    debates = bench.prepared.debates
    panel = bench.session.panel
    result = measure(
        "scheduled",
        bench.recorders,
        lambda: _scheduled(panel, debates, bench.pool, bench.streaming, bench.bar("scheduled", "debates")),
        "streaming" if bench.streaming else "step barriers",
    )
    recorded = {r.model: list(r.requests) for r in bench.recorders}
    workload = [(r.model, _timed(done)) for r in bench.recorders for done in r.results]
    return _Scheduled(result, debates, recorded, workload)


def _limit_mode(bench: _Bench, recorded: dict[str, list[GenerationRequest]]) -> ModeResult:
    """The scheduled mode's requests again, all in one call per engine."""
    return measure(
        "limit",
        bench.recorders,
        lambda: _limit(bench.recorders, recorded, bench.bar("limit", "requests")),
        "one call, no dependencies",
    )


def _sequential_mode(bench: _Bench, scheduled: _Scheduled, sequential_items: int | None) -> ModeResult:
    """ChatEval's loop on all items, or on ``sequential_items`` spread over them and priced."""
    items = bench.prepared.items
    measured_items = spread_indices(len(items), sequential_items or len(items))
    debates = build_debates([items[i] for i in measured_items], bench.session.config.calibrated)
    timed: list[tuple[str, str, TimedRequest]] = []
    panel = bench.session.panel
    sequential = measure(
        "sequential",
        bench.recorders,
        lambda: _sequential(panel, debates, bench.pool, timed, bench.bar("sequential", "debates")),
    )
    # Every measured request, so that estimates from a subset can be checked against a
    # full sequential run (scripts/check_sequential_estimate.py).
    sequential.extra = {
        "timed_request_columns": list(TIMED_REQUEST_COLUMNS),
        "timed_requests": [
            # Four significant digits, not four decimals: a fast request (a scripted
            # engine, a tiny model on a GPU) must not round to 0 s, which would make the
            # per-request timings useless to the estimate check (division by zero there).
            [item, model, r.computed_prompt_tokens, r.generated_tokens, float(f"{r.seconds:.4g}")]
            for item, model, r in timed
        ],
    }
    if len(measured_items) < len(items):
        _price_sequential(sequential, scheduled.result, timed, scheduled.workload, measured_items, len(items))
    return sequential


def _variant_mode(bench: _Bench, extra: str, scheduled: ModeResult) -> ModeResult:
    """The scheduler with step barriers, or on a variant of the config (and its metrics)."""
    variant = _variant(bench.session.config, VARIANTS.get(extra, {}))
    panel = build_panel(variant)
    debates = build_debates(bench.prepared.items, variant.calibrated)
    stream = bench.streaming and extra != "barrier"

    def work() -> None:
        _scheduled(panel, debates, bench.pool, stream, bench.bar(extra, "debates"))

    result = measure(extra, bench.recorders, work)
    if extra != "barrier":  # a variant of the method: did its results change?
        records = item_records(debates, panel)
        metrics = compute_metrics(statistics_settings(variant), records)
        result.extra = {"metrics": _headline(variant.task, metrics)}
    if extra == "early_stop":
        result.extra |= {
            "requests_saved": scheduled.requests - result.requests,
            "stopped_debates": sum(1 for d in debates if stopped_early(d)),
        }
    return result


def _report(
    session: Session, items: int, debates: int, modes: Sequence[ModeResult], metrics: RunMetrics
) -> dict[str, Any]:
    config = session.config
    by_mode = {m.mode: m for m in modes}
    scheduled = by_mode["scheduled"]
    return {
        "config": config.name,
        "backend": config.backend,
        "models": session.models,
        "items": items,
        "debates": debates,
        "agents": len(session.panel.agents),
        "rounds": config.rounds,
        "strategy": config.strategy,
        # The engine settings behind the numbers (--set overrides included).
        "settings": {
            "vllm": config.vllm.model_dump(),
            "transformers": config.transformers.model_dump(),
            "prompt_layout": config.prompt_layout,
            "scheduling": config.scheduling,
            # What the engines read from the environment, chateval's CPU defaults included.
            "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENGINE_ENV_PREFIXES)},
        },
        "modes": [m.as_dict() for m in modes],
        "speedup_scheduled_vs_sequential": round(by_mode["sequential"].seconds / scheduled.seconds, 2),
        "efficiency_scheduled_vs_limit": round(by_mode["limit"].seconds / scheduled.seconds, 3),
        "metrics": _headline(config.task, metrics),
    }


def _variant(config: RunConfig, changes: Mapping[str, Any]) -> RunConfig:
    """``config`` with ``changes`` (a nested mapping of config keys) applied."""
    update: dict[str, Any] = {}
    for key, value in changes.items():
        current = getattr(config, key)
        update[key] = current.model_copy(update=value) if isinstance(value, dict) else value
    return config.model_copy(update=update)


def _headline(task: str, metrics: RunMetrics) -> dict[str, float | None]:
    """The panel's headline agreement numbers (point values) for a compact comparison."""
    view = metrics_view(task, metrics)
    if isinstance(view, PairwiseView):
        panel = view.panel
        return {"accuracy": panel["accuracy"]["value"], "kappa": panel["kappa"]["value"]} if panel else {}
    average = view.panel.get("average") if view.panel else None
    if not average:
        return {}
    spearman, kendall = average.get("spearman"), average.get("kendall")
    return {
        "spearman": spearman["value"] if spearman else None,
        "kendall": kendall["value"] if kendall else None,
    }
