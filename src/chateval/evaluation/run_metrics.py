"""Meta-evaluation: a run's metrics.json from its verdict records.

Agreement with the human labels (hard and soft verdicts side by side, with intervals), the
reference baselines that agreement has to beat, the paired soft-vs-hard comparison, position
statistics, the debate's effect (with opinion probes) and per-model diagnostics
(``chateval.run.rescore`` recomputes them for a finished run folder without running a model).
"""

from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any

from chateval.config.run import RunConfig
from chateval.core.items import Label
from chateval.core.schema import (
    DirectBaselines,
    DirectMetrics,
    Distribution,
    PairwiseBaselines,
    RefereeRow,
    VerdictRecord,
)
from chateval.debate.building import build_panel
from chateval.evaluation.debate_effect import debate_effect
from chateval.evaluation.diagnostics import per_model, run_diagnostics
from chateval.evaluation.metrics import direct_metrics, pairwise_baselines, pairwise_metrics
from chateval.evaluation.paired import compare_records
from chateval.evaluation.systems import systems_metrics
from chateval.judging.aggregate import position_stats

CONSTANT_BASELINE = (
    "undefined: a constant prediction ranks no response above another, so its rank correlation "
    "with the human scores has no value (it is not 0)"
)


def _labels(record: VerdictRecord, soft: bool) -> tuple[Label | None, dict[str, Label]]:
    """The panel's label of a pairwise record and each referee's, hard or soft."""
    if soft:
        return record.get("soft_label"), record.get("soft_referee_labels", {})
    return record.get("label"), record.get("referee_labels", {})


def _pairwise_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> dict[str, Any] | None:
    """Agreement of the panel and of each referee, from the hard labels or the soft ones.

    Every human-labelled item counts, for the panel and for each referee: one without a label
    (every verdict, or that referee's, failed to parse) is wrong, so failures cannot shrink
    ``n`` to the easy items.
    """
    decided = [label for r in records if (label := _labels(r, soft)[0])]
    if not decided:
        return None
    out: dict[str, Any] = {"items_scored": len(decided), "tie_share": decided.count("tie") / len(decided)}
    labelled = [(human, *_labels(r, soft)) for r in records if (human := r.get("human_label"))]
    if not labelled:
        return out
    out["panel"] = pairwise_metrics([h for h, _, _ in labelled], [p for _, p, _ in labelled], seed)
    agents = dict.fromkeys(a for _, _, referees in labelled for a in referees)
    out["referees"] = {}
    for agent in agents:
        mine = [(human, referees.get(agent)) for human, _, referees in labelled]
        out["referees"][agent] = pairwise_metrics([h for h, _ in mine], [p for _, p in mine], seed)
    return out


def _panel_scores(record: VerdictRecord, soft: bool) -> dict[str, float] | None:
    return record.get("soft_scores") if soft else record.get("scores")


def _referee_scores(row: RefereeRow, soft: bool) -> Mapping[str, float] | None:
    return row.get("soft_scores") if soft else row.get("scores")


def _direct_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> dict[str, Any] | None:
    """Correlations of the panel and of each referee, from decoded or expected scores."""
    scored = [r for r in records if _panel_scores(r, soft) is not None]
    if not scored:
        return None
    out: dict[str, Any] = {"items_scored": len(scored)}
    # Grouped items (Topical-Chat's dialogues) get a cluster bootstrap over their groups.
    grouped = all("group" in r for r in records)

    Collected = tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[str]]]

    def collect(scores_of: Callable[[VerdictRecord], Mapping[str, float] | None]) -> Collected:
        truth: dict[str, list[float]] = {}
        predicted: dict[str, list[float]] = {}
        groups: dict[str, list[str]] = {}
        for r in records:
            scores, human = scores_of(r), r["human_scores"]
            if not human or not scores:
                continue
            for name, value in scores.items():
                if name in human:
                    truth.setdefault(name, []).append(human[name])
                    predicted.setdefault(name, []).append(value)
                    groups.setdefault(name, []).append(r.get("group", ""))
        return truth, predicted, groups

    def metrics(collected: Collected) -> DirectMetrics:
        truth, predicted, groups = collected
        return direct_metrics(truth, predicted, seed, groups if grouped else None)

    panel = collect(lambda r: _panel_scores(r, soft))
    if not panel[0]:
        return out
    out |= {"panel": metrics(panel), "referees": {}}
    agents = dict.fromkeys(x["agent"] for r in records for x in r["referees"] if _referee_scores(x, soft))
    for agent in agents:

        def own_scores(r: VerdictRecord, agent: str = agent) -> Mapping[str, float] | None:
            rows = [x for x in r["referees"] if x["agent"] == agent]
            return _referee_scores(rows[0], soft) if rows else None

        own = collect(own_scores)
        out["referees"][agent] = metrics(own)
    return out


def _baselines(
    config: RunConfig, records: Sequence[VerdictRecord], seed: int
) -> PairwiseBaselines | DirectBaselines | None:
    """Reference predictors on the run's human-labelled items (chateval.evaluation.metrics for pairwise;
    direct: a constant predictor and the response's length in words, per scored dimension)."""
    if config.task == "pairwise":
        labels = [label for r in records if (label := r.get("human_label"))]
        return pairwise_baselines(labels) if labels else None
    labelled = [(r, scores) for r in records if (scores := r.get("human_scores"))]
    if not labelled:
        return None
    out: DirectBaselines = {"constant": CONSTANT_BASELINE}
    if any("response_words" not in r for r, _ in labelled):
        out["response_length_unavailable"] = (
            "the verdict records do not give the responses' lengths (a run of an earlier release "
            "whose data file could not be read)"
        )
        return out
    dims = [d.name for d in config.dimensions]
    truth = {d: [h[d] for _, h in labelled if d in h] for d in dims}
    lengths = {d: [float(r["response_words"]) for r, h in labelled if d in h] for d in dims}
    grouped = all("group" in r for r, _ in labelled)
    groups = {d: [r.get("group", "") for r, h in labelled if d in h] for d in dims}
    scored = [d for d in dims if truth[d]]
    out["response_length"] = direct_metrics(
        {d: truth[d] for d in scored},
        {d: lengths[d] for d in scored},
        seed,
        {d: groups[d] for d in scored} if grouped else None,
    )
    return out


def _distribution_stats(records: Sequence[VerdictRecord]) -> dict[str, Any]:
    """How sure the referees were and how much of their distributions rests on approximation."""
    found: list[Distribution] = []
    for r in records:
        rows = [x for o in r["orders"] for x in o["referees"]] if "orders" in r else r["referees"]
        for row in rows:
            kept = row.get("distributions")
            found += kept.values() if isinstance(kept, dict) else kept or []
    if not found:
        return {}
    return {
        "scores_read": len(found),
        "mean_entropy_bits": fmean(d["entropy"] for d in found if d["entropy"] is not None),
        "mean_ambiguous": fmean(d["ambiguous"] for d in found),
        "mean_unmapped": fmean(d["unmapped"] for d in found),
    }


def compute_metrics(config: RunConfig, records: Sequence[VerdictRecord]) -> dict[str, Any]:
    """Agreement with the human labels the items carry (when any), for the hard verdicts and,
    when the scores came with probabilities, the soft ones (``aggregations``); the config's
    ``verdict.aggregation`` is the headline. Plus reference baselines (``baselines``),
    position-bias statistics for pairwise runs, the blind-vs-final comparison of runs with
    opinion probes (``debate_effect``) and per-model diagnostics."""
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
    baselines = _baselines(config, records, seed)
    if baselines is not None:
        metrics["baselines"] = baselines
    if config.task == "pairwise":
        metrics["position"] = position_stats(records)
    systems = systems_metrics(config, records, seed)
    if systems is not None:
        metrics["systems"] = systems
    effect = debate_effect(config.task, records, seed)
    if effect is not None:
        metrics["debate_effect"] = effect
    panel = build_panel(config)
    agent_models = {agent.name: agent.model for agent in panel.agents}
    metrics["per_model"] = per_model(config.task, records, agent_models, seed, panel.summarizer_model)
    metrics |= run_diagnostics(records)  # the panel's parroting and cut-off turns, over all models
    return metrics
