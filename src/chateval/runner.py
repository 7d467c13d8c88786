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
from statistics import fmean
from typing import Any

from chateval import __version__, journal
from chateval.aggregate import aggregate_direct, aggregate_pairwise, position_stats
from chateval.backends import TokenizerOnly
from chateval.backends.base import Backend, HFTokenCounting
from chateval.compare import compare_records
from chateval.config import RunConfig, dump_config
from chateval.context import fit_items
from chateval.data import load_items
from chateval.data.items import DirectItem, Item, PairwiseItem
from chateval.debate.panel import Agent, Debate, Panel, Sampling
from chateval.debate.scheduler import ModelUsage, Scheduler, StepCallback, Usage
from chateval.debate.strategies import get_strategy
from chateval.debate.transcript import SUMMARIZER, Utterance
from chateval.diagnostics import per_model
from chateval.errors import ConfigError, DataError
from chateval.journal import JOURNAL
from chateval.metrics import direct_metrics, pairwise_metrics
from chateval.models import ModelRegistry, on_gpu
from chateval.parroting import EchoDetector, debate_behaviour
from chateval.placement import Loader, ModelPool, Placement, memory_shares, plan_placement
from chateval.prompts import PromptBuilder, Role, get_role
from chateval.soft import check_vocabulary
from chateval.store import prepare_outdir, write_json, write_jsonl
from chateval.verdicts import Dimension, DirectFormat, PairwiseFormat, VerdictFormat

log = logging.getLogger(__name__)

BackendFactory = Callable[[RunConfig, str], Backend]


def verdict_format(config: RunConfig) -> VerdictFormat:
    """The verdict format the config asks for."""
    v = config.verdict
    if config.task == "pairwise":
        return PairwiseFormat(v.low, v.high, v.evidence_max_tokens, v.reasoning, v.reasoning_max_tokens)
    dims = [Dimension(d.name, d.description, d.low, d.high) for d in config.dimensions]
    return DirectFormat(dims, v.evidence_max_tokens, v.reasoning, v.reasoning_max_tokens)


def build_panel(config: RunConfig) -> Panel:
    """Resolve roles and agent names and assemble the panel of ``config``."""
    agents = []
    for agent in config.agents:
        role = (
            get_role(agent.role)
            if isinstance(agent.role, str)
            else Role(agent.role.name, agent.role.description)
        )
        agents.append(Agent(name=agent.name or role.name, role=role, model=agent.model))
    # Repeated roles (the paper's same-role ablation) need distinct speaker names.
    names = [a.name for a in agents]
    agents = [
        Agent(f"{a.name} {names[:i].count(a.name) + 1}", a.role, a.model) if names.count(a.name) > 1 else a
        for i, a in enumerate(agents)
    ]
    # Prompts and transcripts tell speakers apart by name only.
    final_names = [a.name for a in agents]
    clashes = sorted({n for n in final_names if final_names.count(n) > 1 or n.lower() == SUMMARIZER})
    if clashes:
        raise ConfigError(f"agents: speaker names must be distinct and not 'Summarizer'; clash: {clashes}")
    fmt = verdict_format(config)
    dims = fmt.dimensions if isinstance(fmt, DirectFormat) else ()
    s = config.sampling
    return Panel(
        agents=tuple(agents),
        rounds=config.rounds,
        strategy=get_strategy(config.strategy),
        prompts=PromptBuilder(
            fmt.instruction, dims, config.prompt_layout, [(a.name, a.role.description) for a in agents]
        ),
        verdict_format=fmt,
        sampling=Sampling(s.temperature, s.top_p, s.seed, s.discussion_max_tokens, s.summary_max_tokens),
        summarizer_model=config.summarizer_model,
        opinion_probes=config.opinion_probes,
        early_stop=config.early_stop,
        soft=config.verdict.soft,
    )


def check_soft_verdicts(panel: Panel, counters: Mapping[str, object]) -> None:
    """Refuse, before anything runs, a referee model whose score probabilities cannot be read.

    Backends without a vocabulary (scripted ones) are skipped: their results say themselves
    whether they carry probabilities.
    """
    referee_models = dict.fromkeys(a.model for a in panel.agents)
    for model in referee_models:
        counter = counters.get(model)
        if isinstance(counter, HFTokenCounting):
            check_vocabulary(model, counter.digit_tokens().values(), panel.verdict_format.scales)


def load_run_items(config: RunConfig) -> list[Item]:
    """Load the config's items and check they fit its task."""
    items = load_items(config.data)
    expected = PairwiseItem if config.task == "pairwise" else DirectItem
    if items and not isinstance(items[0], expected):
        raise DataError(
            f"{config.data.path}: format {config.data.format!r} gives "
            f"{type(items[0]).__name__} records, but the task is {config.task!r}"
        )
    return items[: config.data.limit] if config.data.limit else items


def build_debates(items: Sequence[Item], position_calibration: bool = False) -> list[Debate]:
    """One debate per item; pairwise items also in swapped order when calibrating."""
    debates = []
    for item in items:
        debates.append(Debate(key=item.id, item=item))
        if position_calibration and isinstance(item, PairwiseItem):
            debates.append(Debate(key=f"{item.id}#swapped", item=item, swapped=True))
    return debates


def item_records(debates: Sequence[Debate], panel: Panel) -> list[dict[str, Any]]:
    """One verdict record per item, in item order (both orders of an item together)."""
    fmt = panel.verdict_format
    detector = EchoDetector(panel.prompts.instruction_texts())
    groups: dict[str, list[Debate]] = {}
    for debate in debates:
        groups.setdefault(debate.item.id, []).append(debate)
    records: list[dict[str, Any]] = []
    for item_id, group in groups.items():
        item = group[0].item
        record: dict[str, Any] = {"item_id": item_id}
        if isinstance(fmt, PairwiseFormat) and isinstance(item, PairwiseItem):
            record.update(aggregate_pairwise(group, fmt, panel.opinion_probes))
            record["human_label"] = item.label
            rows = [(d, order["referees"]) for d, order in zip(group, record["orders"], strict=True)]
        elif isinstance(fmt, DirectFormat) and isinstance(item, DirectItem):
            record.update(aggregate_direct(group[0], fmt, panel.opinion_probes))
            record["human_scores"] = dict(item.scores) or None
            if item.group is not None:
                record["group"] = item.group
            rows = [(group[0], record["referees"])]
        for debate, referees in rows:
            behaviour = debate_behaviour(debate, panel, detector)
            for row in referees:
                row["parroting"] = behaviour[row["agent"]].as_dict()
        records.append(record)
    return records


def default_backend_factory(config: RunConfig, model: str, memory_fraction: float | None = None) -> Backend:
    """Load ``model`` (a registry name) on its backend, preparing it if needed."""
    from chateval.backends import create_backend

    registry = ModelRegistry(config.models_dir)
    fraction = config.placement.memory_fractions.get(model, memory_fraction)
    return create_backend(config, model, registry, fraction)


def backend_loader(
    config: RunConfig, factory: BackendFactory, registry: ModelRegistry | None, placement: Placement
) -> Loader:
    """How the pool loads a model; co-resident vLLM engines on a GPU split the memory."""
    if factory is not default_backend_factory or registry is None:
        return lambda model: factory(config, model)
    shares: dict[str, float] = {}
    if placement.mode == "co_resident" and len(placement.need_gib) > 1 and on_gpu():
        shares = memory_shares(placement.need_gib, 0.85)
    return lambda model: default_backend_factory(config, model, shares.get(model))


@dataclass
class RunResult:
    """What a finished run wrote, for the CLI summary."""

    outdir: Path
    run_info: dict[str, Any]
    metrics: dict[str, Any] | None


def stopped_early(debate: Debate) -> bool:
    """The debate ended at an early-stop check (its verdicts are check answers)."""
    return any(u.kind == "verdict" and u.turn.kind == "check" for u in debate.transcript.utterances)


def transcript_record(debate: Debate) -> dict[str, Any]:
    return {
        "key": debate.key,
        "item_id": debate.item.id,
        "swapped": debate.swapped,
        "messages": [
            {
                "round": u.turn.round,
                "speaker": u.speaker,
                "kind": u.kind,
                "turn": u.turn.kind,
                "probe": u.turn.hidden,  # hidden: an opinion probe or an early-stop check
                "scoring": u.turn.scoring,  # the scores that continue the assessment before
                "text": u.text,
                "finish_reason": u.finish_reason,
            }
            for u in debate.transcript.utterances
        ],
    }


def _pairwise_agreement(records: Sequence[dict[str, Any]], seed: int, soft: bool) -> dict[str, Any] | None:
    """Agreement of the panel and of each referee, from the hard labels or the soft ones."""
    label, referee_labels = ("soft_label", "soft_referee_labels") if soft else ("label", "referee_labels")
    decided = [r for r in records if r.get(label) is not None]
    if not decided:
        return None
    out: dict[str, Any] = {
        "items_scored": len(decided),
        "tie_share": sum(1 for r in decided if r[label] == "tie") / len(decided),
    }
    labelled = [r for r in decided if r["human_label"] is not None]
    if not labelled:
        return out
    truth = [r["human_label"] for r in labelled]
    out["panel"] = pairwise_metrics(truth, [r[label] for r in labelled], seed)
    agents = dict.fromkeys(a for r in labelled for a in r.get(referee_labels, {}))
    out["referees"] = {}
    for agent in agents:
        mine = [r for r in labelled if agent in r.get(referee_labels, {})]
        out["referees"][agent] = pairwise_metrics(
            [r["human_label"] for r in mine], [r[referee_labels][agent] for r in mine], seed
        )
    return out


def _direct_agreement(records: Sequence[dict[str, Any]], seed: int, soft: bool) -> dict[str, Any] | None:
    """Correlations of the panel and of each referee, from decoded or expected scores."""
    key = "soft_scores" if soft else "scores"
    scored = [r for r in records if r.get(key) is not None]
    if not scored:
        return None
    out: dict[str, Any] = {"items_scored": len(scored)}
    # Grouped items (Topical-Chat's dialogues) get a cluster bootstrap over their groups.
    grouped = all("group" in r for r in records)

    Collected = tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[str]]]

    def collect(scores_of: Any) -> Collected:
        truth: dict[str, list[float]] = {}
        predicted: dict[str, list[float]] = {}
        groups: dict[str, list[str]] = {}
        for r in records:
            scores = scores_of(r)
            if not r["human_scores"] or not scores:
                continue
            for name, value in scores.items():
                if name in r["human_scores"]:
                    truth.setdefault(name, []).append(r["human_scores"][name])
                    predicted.setdefault(name, []).append(value)
                    groups.setdefault(name, []).append(r.get("group", ""))
        return truth, predicted, groups

    def metrics(collected: Collected) -> dict[str, Any]:
        truth, predicted, groups = collected
        return direct_metrics(truth, predicted, seed, groups if grouped else None)

    panel = collect(lambda r: r.get(key))
    if not panel[0]:
        return out
    out |= {"panel": metrics(panel), "referees": {}}
    agents = dict.fromkeys(ref["agent"] for r in records for ref in r["referees"] if key in ref)
    for agent in agents:
        own = collect(
            lambda r, agent=agent: next(
                (x[key] for x in r["referees"] if x["agent"] == agent and key in x), None
            )
        )
        out["referees"][agent] = metrics(own)
    return out


def _distribution_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How sure the referees were and how much of their distributions rests on approximation."""
    found: list[dict[str, Any]] = []
    for r in records:
        for ref in (x for o in r.get("orders", [r]) for x in o["referees"]):
            kept = ref.get("distributions")
            found += kept.values() if isinstance(kept, dict) else kept or []
    if not found:
        return {}
    return {
        "scores_read": len(found),
        "mean_entropy_bits": fmean(d["entropy"] for d in found if d["entropy"] is not None),
        "mean_ambiguous": fmean(d["ambiguous"] for d in found),
        "mean_unmapped": fmean(d["unmapped"] for d in found),
    }


def compute_metrics(config: RunConfig, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Agreement with the human labels the items carry (when any), for the hard verdicts and,
    when the scores came with probabilities, the soft ones (``aggregations``); the config's
    ``verdict.aggregation`` is the headline. Plus position-bias statistics for pairwise runs
    and per-model diagnostics."""
    seed = config.sampling.seed
    agreement = _pairwise_agreement if config.task == "pairwise" else _direct_agreement
    hard = agreement(records, seed, soft=False) or {"items_scored": 0}
    soft = agreement(records, seed, soft=True)
    if soft is not None:
        soft |= _distribution_stats(records)
    if not config.verdict.soft:
        status = "off (verdict.soft: false)"
    elif soft is None:
        status = "unavailable: no verdict came with token probabilities (the backend cannot read them)"
    else:
        status = "read"
    wanted = config.verdict.aggregation
    headline = soft if wanted == "soft" and soft is not None else hard
    metrics: dict[str, Any] = {
        "items": len(records),
        "items_scored": headline["items_scored"],
        **{k: headline[k] for k in ("panel", "referees") if k in headline},
        "aggregation": wanted if headline is soft else "hard",
        "soft_verdicts": status,
        "aggregations": {"hard": hard} | ({"soft": soft} if soft is not None else {}),
    }
    if soft is not None and "panel" in soft:
        # The same items judged both ways: is soft's gap over hard more than noise?
        soft_view = [{**r, "label": r.get("soft_label"), "scores": r.get("soft_scores")} for r in records]
        metrics["soft_vs_hard"] = compare_records(config.task, records, soft_view, seed)
    if config.task == "pairwise":
        metrics["position"] = position_stats(records)
    agent_models = {agent.name: agent.model for agent in build_panel(config).agents}
    metrics["per_model"] = per_model(config.task, records, agent_models, seed)
    return metrics


def rescore(outdir: Path) -> dict[str, Any] | None:
    """Recompute ``metrics.json`` of a finished run from its verdicts.jsonl (no model runs)."""
    import json

    import yaml

    from chateval.config import parse_config

    for name in ("config.yaml", "verdicts.jsonl"):
        if not (outdir / name).is_file():
            raise DataError(f"{outdir}: no {name}; rescore needs a finished run folder")
    tree = yaml.safe_load((outdir / "config.yaml").read_text(encoding="utf-8"))
    config = parse_config(tree, str(outdir / "config.yaml"), outdir)
    records = [
        json.loads(line) for line in (outdir / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    metrics = compute_metrics(config, records)
    write_json(outdir / "metrics.json", metrics)
    return metrics


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
            by_key[key].transcript = by_key[key].transcript.add(utterance)


def run(
    config: RunConfig,
    outdir: Path,
    *,
    force: bool = False,
    backends: Mapping[str, Backend] | None = None,
    backend_factory: BackendFactory = default_backend_factory,
    on_step: StepCallback | None = None,
) -> RunResult:
    """Run ``config`` and write its run folder; ``backends`` may be given (tests, sweeps)."""
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    items = load_run_items(config)
    panel = build_panel(config)
    models = config.model_names()
    registry = None
    if backend_factory is default_backend_factory and any(m not in (backends or {}) for m in models):
        registry = ModelRegistry(config.models_dir)
        for model in models:
            registry.spec(model)  # unknown names fail here, before any file is written
    resuming = prepare_outdir(outdir, force, dump_config(config))

    placement = plan_placement(config, registry, backends or {})
    pool = ModelPool(
        models, backend_loader(config, backend_factory, registry, placement), placement.mode, backends
    )
    try:
        pool.start()
        counters = {
            m: pool.get(m) if m in pool.resident() or registry is None else TokenizerOnly(m, registry)
            for m in models
        }
        if config.verdict.soft:
            check_soft_verdicts(panel, counters)
        items, truncations = fit_items(panel, items, counters, config.context_policy, config.data.path)
        debates = build_debates(items, config.task == "pairwise" and config.position_calibration)
        scheduler = Scheduler(pool, on_step)
        journal_path = outdir / JOURNAL
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

        progress = {d.key: state.debate_progress(d.key) for d in debates}
        streaming = config.scheduling != "barrier" and scheduler.can_stream(models)
        if config.scheduling == "streaming" and not streaming:
            log.warning("scheduling: streaming needs co-resident vLLM engines; running with step barriers")
        debate_started = time.perf_counter()
        if streaming:
            usage = scheduler.run_streaming(
                panel, debates, progress=progress, on_debate_step=record_debate_step
            )
        else:
            usage = scheduler.run(panel, debates, progress=progress, on_step_done=record_step)
        debate_seconds = time.perf_counter() - debate_started
    finally:
        pool.close()

    records = item_records(debates, panel)
    for record in records:
        cuts = truncations.get(record["item_id"])
        record["truncated"] = {c.model: c.fields for c in cuts} if cuts else None
    write_jsonl(outdir / "transcripts.jsonl", (transcript_record(d) for d in debates))
    write_jsonl(outdir / "verdicts.jsonl", records)

    metrics = compute_metrics(config, records)
    write_json(outdir / "metrics.json", metrics)

    total = usage.total()
    run_info = {
        "chateval_version": __version__,
        "name": config.name,
        "task": config.task,
        "backend": config.backend,
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
        "cached_prompt_tokens": total.cached_tokens,
        "generated_tokens": total.completion_tokens,
        "verdict_parse_failures": sum(r["parse_failures"] for r in records),
        "truncated_items": len(truncations),
        "per_model": {name: vars(u) for name, u in usage.per_model.items()},
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
    write_json(outdir / "run.json", run_info)
    return RunResult(outdir, run_info, metrics)
