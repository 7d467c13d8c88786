"""Meta-evaluation: a run's metrics.json from its verdict records.

Agreement with the human labels (hard and soft verdicts side by side, with intervals), the
reference baselines that agreement has to beat, the paired soft-vs-hard comparison, position
statistics, the debate's effect (with opinion probes) and per-model diagnostics
(``chateval.run.rescore`` recomputes them for a finished run folder without running a model).
"""

from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any, Generic, Required, TypeVar

from chateval.core.items import Label
from chateval.core.schema.diagnostics import (
    DirectModelDiagnostics,
    PairwiseModelDiagnostics,
    PanelDiagnostics,
)
from chateval.core.schema.metrics import (
    Aggregations,
    AgreementOf,
    DirectAgreement,
    DirectBaselines,
    DirectComparison,
    DirectDebateEffect,
    DirectMetrics,
    PairwiseAgreement,
    PairwiseBaselines,
    PairwiseComparison,
    PairwiseDebateEffect,
    PairwiseMetrics,
    Panel,
    PositionStats,
)
from chateval.core.schema.records import Distribution, RefereeRow, VerdictRecord
from chateval.core.strict_model import record_schema
from chateval.evaluation.agreement.debate_effect import debate_effect
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_baselines, pairwise_metrics
from chateval.evaluation.agreement.paired import compare_direct_records, compare_pairwise_records
from chateval.evaluation.diagnostics.summary import per_model
from chateval.evaluation.measures import measure_sections, registered_measures, top_level
from chateval.evaluation.settings import StatisticsSettings
from chateval.evaluation.systems.section import DirectSystemsMetrics, PairwiseSystems, systems_metrics
from chateval.judging.aggregate import position_stats

CONSTANT_BASELINE = (
    "undefined: a constant prediction ranks no response above another, so its rank correlation "
    "with the human scores has no value (it is not 0)"
)


@record_schema
class CommonRunMetrics(PanelDiagnostics, total=False):
    """The keys of metrics.json whatever the task (the task's class below adds the rest). Runs
    of earlier releases lack some: only ``items`` is always there."""

    items: Required[int]
    items_scored: int  # by the headline aggregation
    aggregation: str  # the headline: "hard", or "soft" when asked for and read
    soft_verdicts: str  # "read", or why not
    systems: PairwiseSystems | DirectSystemsMetrics  # runs that judged named systems
    # each registered measure's section, by its name (chateval.evaluation.measures): an open
    # mapping, so a measure added later leaves this type alone
    measures: dict[str, dict[str, Any]]


Effect = TypeVar("Effect", bound=PairwiseDebateEffect | DirectDebateEffect)
Model = TypeVar("Model", bound=PairwiseModelDiagnostics | DirectModelDiagnostics)


@record_schema
class RunMetricsOf(CommonRunMetrics, Generic[Panel, Effect, Model], total=False):
    """The keys whose type is the task's. ``panel`` and ``referees`` are the headline
    aggregation's (``aggregations`` has both; runs before soft verdicts have them only here)."""

    panel: Panel
    referees: dict[str, Panel]
    debate_effect: Effect  # runs with opinion probes
    per_model: dict[str, Model]


@record_schema
class PairwiseRunMetrics(
    RunMetricsOf[PairwiseMetrics, PairwiseDebateEffect, PairwiseModelDiagnostics], total=False
):
    """metrics.json of a pairwise run."""

    aggregations: Aggregations[PairwiseAgreement]
    soft_vs_hard: PairwiseComparison | None  # A: hard, B: soft, on the same items
    baselines: PairwiseBaselines
    position: PositionStats


@record_schema
class DirectRunMetrics(RunMetricsOf[DirectMetrics, DirectDebateEffect, DirectModelDiagnostics], total=False):
    """metrics.json of a direct run (as ``PairwiseRunMetrics``, without position statistics)."""

    aggregations: Aggregations[DirectAgreement]
    soft_vs_hard: DirectComparison | None
    baselines: DirectBaselines


RunMetrics = PairwiseRunMetrics | DirectRunMetrics
Agreement = TypeVar("Agreement", PairwiseAgreement, DirectAgreement)


def _labels(record: VerdictRecord, soft: bool) -> tuple[Label | None, dict[str, Label]]:
    """The panel's label of a pairwise record and each referee's, hard or soft."""
    if soft:
        return record.get("soft_label"), record.get("soft_referee_labels", {})
    return record.get("label"), record.get("referee_labels", {})


def _pairwise_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> PairwiseAgreement | None:
    """Agreement of the panel and of each referee, from the hard labels or the soft ones.

    Every human-labelled item counts, for the panel and for each referee: one without a label
    (every verdict, or that referee's, failed to parse) is wrong, so failures cannot shrink
    ``n`` to the easy items.
    """
    decided = [label for r in records if (label := _labels(r, soft)[0])]
    if not decided:
        return None
    out: PairwiseAgreement = {"items_scored": len(decided), "tie_share": decided.count("tie") / len(decided)}
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


def _direct_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> DirectAgreement | None:
    """Correlations of the panel and of each referee, from decoded or expected scores."""
    scored = [r for r in records if _panel_scores(r, soft) is not None]
    if not scored:
        return None
    out: DirectAgreement = {"items_scored": len(scored)}
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
    out["panel"] = metrics(panel)
    out["referees"] = {}
    agents = dict.fromkeys(x["agent"] for r in records for x in r["referees"] if _referee_scores(x, soft))
    for agent in agents:

        def own_scores(r: VerdictRecord, agent: str = agent) -> Mapping[str, float] | None:
            rows = [x for x in r["referees"] if x["agent"] == agent]
            return _referee_scores(rows[0], soft) if rows else None

        own = collect(own_scores)
        out["referees"][agent] = metrics(own)
    return out


def _direct_baselines(
    settings: StatisticsSettings, records: Sequence[VerdictRecord]
) -> DirectBaselines | None:
    """Reference predictors on the run's human-scored items: a constant predictor and the
    response's length in words, per scored dimension (pairwise: chateval.evaluation.agreement.metrics)."""
    labelled = [(r, scores) for r in records if (scores := r.get("human_scores"))]
    if not labelled:
        return None
    out: DirectBaselines = {"constant": CONSTANT_BASELINE}
    if any("response_words" not in r for r, _ in labelled):
        out["response_length_unavailable"] = (
            "the verdict records do not give the responses' lengths (a run of a release before they "
            "were recorded)"
        )
        return out
    dims, seed = settings.dimensions, settings.seed
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


def _with_distributions(agreement: Agreement | None, records: Sequence[VerdictRecord]) -> Agreement | None:
    """``agreement`` (soft verdicts) with how sure the referees were and how much of their
    distributions rests on approximation."""
    if agreement is None:
        return None
    found: list[Distribution] = []
    for r in records:
        rows = [x for o in r["orders"] for x in o["referees"]] if "orders" in r else r["referees"]
        for row in rows:
            kept = row.get("distributions")
            found += kept.values() if isinstance(kept, dict) else kept or []
    if found:
        agreement["scores_read"] = len(found)
        agreement["mean_entropy_bits"] = fmean(d["entropy"] for d in found if d["entropy"] is not None)
        agreement["mean_ambiguous"] = fmean(d["ambiguous"] for d in found)
        agreement["mean_unmapped"] = fmean(d["unmapped"] for d in found)
    return agreement


def _aggregations(hard: Agreement, soft: Agreement | None) -> Aggregations[Agreement]:
    return {"hard": hard, "soft": soft} if soft is not None else {"hard": hard}


def _both(
    agreement: Callable[[Sequence[VerdictRecord], int, bool], Agreement | None],
    records: Sequence[VerdictRecord],
    seed: int,
) -> tuple[Agreement, Agreement | None]:
    """The hard verdicts' agreement (nothing scored: 0 items) and the soft ones' (None: not read)."""
    hard = agreement(records, seed, False) or {"items_scored": 0}
    return hard, _with_distributions(agreement(records, seed, True), records)


def _headline(
    metrics: RunMetricsOf[Panel, Effect, Model],
    settings: StatisticsSettings,
    hard: AgreementOf[Panel],
    soft: AgreementOf[Panel] | None,
) -> None:
    """metrics.json's keys after ``items``: the aggregation the run reports first (the settings'
    ``verdict.aggregation`` when it was read), its name, and whether the soft verdicts were
    read (or why not)."""
    wanted = settings.aggregation
    headline = soft if wanted == "soft" and soft is not None else hard
    metrics["items_scored"] = headline["items_scored"]
    if "panel" in headline:
        metrics["panel"] = headline["panel"]
    if "referees" in headline:
        metrics["referees"] = headline["referees"]
    metrics["aggregation"] = wanted if headline is soft else "hard"
    if not settings.soft:
        metrics["soft_verdicts"] = "off (verdict.soft: false)"
    elif soft is None:
        metrics["soft_verdicts"] = (
            "unavailable: no verdict came with token probabilities (the backend cannot read them)"
        )
    else:
        metrics["soft_verdicts"] = "read"


def _as_soft(record: VerdictRecord) -> VerdictRecord:
    """The record with its soft label and scores as its verdict (soft-vs-hard comparison)."""
    soft = record.copy()
    soft["label"] = record.get("soft_label")
    soft["scores"] = record.get("soft_scores")
    return soft


def _last(
    metrics: RunMetricsOf[Panel, Effect, Model],
    settings: StatisticsSettings,
    records: Sequence[VerdictRecord],
    effect: Effect | None,
    models: dict[str, Model],
) -> None:
    """metrics.json's last keys: the systems judged, the debate's effect, per-model diagnostics,
    and the registered measures (chateval.evaluation.measures)."""
    systems = systems_metrics(settings, records)
    if systems is not None:
        metrics["systems"] = systems
    if effect is not None:
        metrics["debate_effect"] = effect
    metrics["per_model"] = models
    # The registered measures: the panel's diagnostics at their top-level keys, the others
    # (where they have something to say) under ``measures``.
    sections = measure_sections(settings, records)
    measured = {}
    for measure in registered_measures():
        section = sections[measure.name]
        if top_level(measure):
            metrics[measure.name] = section  # type: ignore[literal-required]
        elif section is not None:
            measured[measure.name] = section
    metrics["measures"] = measured


def compute_metrics(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> RunMetrics:
    """Agreement with the human labels the items carry (when any), for the hard verdicts and,
    when the scores came with probabilities, the soft ones (``aggregations``); the settings'
    ``verdict.aggregation`` is the headline. Plus reference baselines (``baselines``),
    position-bias statistics for pairwise runs, the blind-vs-final comparison of runs with
    opinion probes (``debate_effect``) and per-model diagnostics."""
    if settings.task == "pairwise":
        return _pairwise_run(settings, records)
    return _direct_run(settings, records)


def _pairwise_run(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> PairwiseRunMetrics:
    seed = settings.seed
    hard, soft = _both(_pairwise_agreement, records, seed)
    metrics: PairwiseRunMetrics = {"items": len(records)}
    _headline(metrics, settings, hard, soft)
    metrics["aggregations"] = _aggregations(hard, soft)
    if soft is not None and "panel" in soft:
        # The same items judged both ways: is soft's gap over hard more than noise?
        metrics["soft_vs_hard"] = compare_pairwise_records(records, [_as_soft(r) for r in records], seed)
    if labels := [label for r in records if (label := r.get("human_label"))]:
        metrics["baselines"] = pairwise_baselines(labels)
    metrics["position"] = position_stats(records)
    agents, summarizer = settings.referee_models, settings.summarizer_model
    models = per_model("pairwise", records, agents, seed, summarizer, settings.scales)
    _last(metrics, settings, records, debate_effect("pairwise", records, seed), models)
    return metrics


def _direct_run(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> DirectRunMetrics:
    seed = settings.seed
    hard, soft = _both(_direct_agreement, records, seed)
    metrics: DirectRunMetrics = {"items": len(records)}
    _headline(metrics, settings, hard, soft)
    metrics["aggregations"] = _aggregations(hard, soft)
    if soft is not None and "panel" in soft:
        metrics["soft_vs_hard"] = compare_direct_records(records, [_as_soft(r) for r in records], seed)
    if (baselines := _direct_baselines(settings, records)) is not None:
        metrics["baselines"] = baselines
    agents, summarizer = settings.referee_models, settings.summarizer_model
    models = per_model("direct", records, agents, seed, summarizer, settings.scales)
    _last(metrics, settings, records, debate_effect("direct", records, seed), models)
    return metrics
