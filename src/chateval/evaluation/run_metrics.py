"""Meta-evaluation: a run's metrics.json from its verdict records.

Agreement with the human labels (hard and soft verdicts side by side, with intervals) is the
run's headline; everything else is a registered measure (chateval.evaluation.measures): the
paired soft-vs-hard comparison, the reference baselines, position statistics, the systems
judged, the debate's effect, per-model and panel diagnostics (``chateval.run.rescore``
recomputes them all for a finished run folder without running a model).
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
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.measures import measure_sections, registered_measures, top_level
from chateval.evaluation.settings import StatisticsSettings
from chateval.evaluation.systems.section import DirectSystemsMetrics, PairwiseSystems


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
    debate_effect: Effect  # runs with opinion probes, or a panel without them (``unavailable``)
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


def compute_metrics(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> RunMetrics:
    """Agreement with the human labels the items carry (when any), for the hard verdicts and,
    when the scores came with probabilities, the soft ones (``aggregations``); the settings'
    ``verdict.aggregation`` is the headline. Then every registered measure
    (chateval.evaluation.measures): the soft-vs-hard comparison, reference baselines, position
    statistics, the systems judged, the debate's effect, per-model and panel diagnostics, and
    any measure registered from outside."""
    if settings.task == "pairwise":
        return _pairwise_run(settings, records)
    return _direct_run(settings, records)


def _measures(
    metrics: RunMetricsOf[Panel, Effect, Model],
    settings: StatisticsSettings,
    records: Sequence[VerdictRecord],
) -> None:
    """Every registered measure (chateval.evaluation.measures): the built-ins at their
    top-level keys (where they have something to say), the others under ``measures``."""
    sections = measure_sections(settings, records)
    measured = {}
    for measure in registered_measures():
        section = sections[measure.name]
        if section is None:
            continue
        if top_level(measure):
            metrics[measure.name] = section  # type: ignore[literal-required]
        else:
            measured[measure.name] = section
    metrics["measures"] = measured


def _pairwise_run(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> PairwiseRunMetrics:
    hard, soft = _both(_pairwise_agreement, records, settings.seed)
    metrics: PairwiseRunMetrics = {"items": len(records)}
    _headline(metrics, settings, hard, soft)
    metrics["aggregations"] = _aggregations(hard, soft)
    _measures(metrics, settings, records)
    return metrics


def _direct_run(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> DirectRunMetrics:
    hard, soft = _both(_direct_agreement, records, settings.seed)
    metrics: DirectRunMetrics = {"items": len(records)}
    _headline(metrics, settings, hard, soft)
    metrics["aggregations"] = _aggregations(hard, soft)
    _measures(metrics, settings, records)
    return metrics
