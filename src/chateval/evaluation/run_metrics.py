"""Meta-evaluation: a run's metrics.json from its verdict records.

Agreement with the human labels (hard and soft verdicts side by side, with intervals) is the
run's headline; everything else is a registered measure (chateval.evaluation.measures): the
paired soft-vs-hard comparison, the reference baselines, position statistics, the systems
judged, the debate's effect, per-model and panel diagnostics (``chateval.run.rescore``
recomputes them all for a finished run folder without running a model).
"""

from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import TypeVar

from chateval.evaluation.agreement.metrics import pairwise_metrics
from chateval.evaluation.agreement.panel import (
    collect_scores,
    correlations,
    direct_panel,
    pairwise_panel,
    panel_label,
    panel_scores,
)
from chateval.evaluation.measures import registered_measures, top_level
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.agreement import Aggregations, AgreementOf, DirectAgreement, PairwiseAgreement, Panel
from chateval.schema.base import Label
from chateval.schema.run_metrics import (
    DirectRunMetrics,
    Effect,
    Model,
    PairwiseRunMetrics,
    RunMetrics,
    RunMetricsOf,
)
from chateval.schema.verdicts import Distribution, RefereeRow, VerdictRecord

Agreement = TypeVar("Agreement", PairwiseAgreement, DirectAgreement)


def _labels(record: VerdictRecord, soft: bool) -> tuple[Label | None, dict[str, Label]]:
    """The panel's label of a pairwise record and each referee's, hard or soft."""
    referees = record.get("soft_referee_labels", {}) if soft else record.get("referee_labels", {})
    return panel_label(record, soft), referees


def _pairwise_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> PairwiseAgreement | None:
    """Agreement of the panel and of each referee, from the hard labels or the soft ones.

    Every human-labelled item counts, for the panel and for each referee: one without a label
    (every verdict, or that referee's, failed to parse) is wrong, so failures cannot shrink
    ``n`` to the easy items.
    """
    decided = [label for r in records if (label := panel_label(r, soft))]
    if not decided:
        return None
    out: PairwiseAgreement = {"items_scored": len(decided), "tie_share": decided.count("tie") / len(decided)}
    panel = pairwise_panel(records, seed, soft)
    if panel is None:
        return out
    out["panel"] = panel
    labelled = [(human, _labels(r, soft)[1]) for r in records if (human := r.get("human_label"))]
    agents = dict.fromkeys(a for _, referees in labelled for a in referees)
    out["referees"] = {}
    for agent in agents:
        mine = [(human, referees.get(agent)) for human, referees in labelled]
        out["referees"][agent] = pairwise_metrics([h for h, _ in mine], [p for _, p in mine], seed)
    return out


def _referee_scores(row: RefereeRow, soft: bool) -> Mapping[str, float] | None:
    return row.get("soft_scores") if soft else row.get("scores")


def _direct_agreement(records: Sequence[VerdictRecord], seed: int, soft: bool) -> DirectAgreement | None:
    """Correlations of the panel and of each referee, from decoded or expected scores."""
    scored = [r for r in records if panel_scores(r, soft) is not None]
    if not scored:
        return None
    out: DirectAgreement = {"items_scored": len(scored)}
    panel = direct_panel(records, seed, soft)
    if panel is None:
        return out
    out["panel"] = panel
    out["referees"] = {}
    agents = dict.fromkeys(x["agent"] for r in records for x in r["referees"] if _referee_scores(x, soft))
    for agent in agents:

        def own_scores(r: VerdictRecord, agent: str = agent) -> Mapping[str, float] | None:
            rows = [x for x in r["referees"] if x["agent"] == agent]
            return _referee_scores(rows[0], soft) if rows else None

        out["referees"][agent] = correlations(records, collect_scores(records, own_scores), seed)
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
            "unavailable: no item's verdicts all came with token probabilities (a backend that "
            "cannot read them, or verdicts that failed to parse)"
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
    measured = {}
    for measure in registered_measures():
        section = measure.compute(settings, records)
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
