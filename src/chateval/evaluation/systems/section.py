"""Results of a run that judged named systems: win rates, leaderboards, the length bias, per-system
direct scores, and estimates calibrated by the human labels some items carry.

The records of items that name their systems (pairwise: ``system_a``/``system_b``; direct:
``system``) become the inputs of ``win_rates`` and ``leaderboard``: one ``Comparison`` per
pairwise item, the panel's decision over both answer orders. Its soft value is the panel's
probability that A's answer is the better one, read from the referees' score distributions: for
each referee and answer order P(score A > score B) + P(equal) / 2 with the two scores'
distributions taken as independent, averaged over referees and orders. Items the panel could
not decide (every verdict failed) are counted as ``undecided`` and left out of the win rates and
the leaderboards; the calibrated estimates keep them, the panel's prediction a tie and their
human labels used like any other (``calibrated_leaderboard``).

Calibrated estimates (prediction-powered inference, ``ppi``): where only some comparisons of a
pair of systems (direct: some responses of a system) carry a human label, the panel's verdicts
on all of them estimate the human win rate (mean score), corrected by the labelled slice. The
labels of all pairs together calibrate a leaderboard (``calibrated_leaderboard``): each system's
rating and win rate against the field, and which system is best.
"""

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from chateval.evaluation.settings import Scales, StatisticsSettings
from chateval.evaluation.systems.against_baseline import against_baseline
from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard, tied_predictions
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from chateval.evaluation.systems.leaderboard import leaderboard
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.win_rates import win_rates
from chateval.schema.calibrated import CalibratedMean, CalibratedPair, LeftOutPair
from chateval.schema.run_metrics import DirectSystemsMetrics, PairwiseSystems
from chateval.schema.systems import ProportionInterval
from chateval.schema.verdicts import Distribution, VerdictRecord

OUTCOME = {"A": 1.0, "tie": 0.5, "B": 0.0}
# A calibrated estimate needs a variance from its labelled slice; under ppi.FEW_LABELS it comes
# with a warning, and its t(n - 1) quantile keeps its interval honest about so few.
MIN_LABELLED = 2


def soft_win_probability(record: VerdictRecord) -> float | None:
    """The panel's probability that A's answer is better (ties half), from its referees' score
    distributions in every answer order; None when no verdict came with distributions."""
    values: list[float] = []
    for order in record.get("orders", []):
        for row in order["referees"]:
            shown = row.get("distributions")
            if row.get("error") or not isinstance(shown, list) or len(shown) != 2:
                continue
            first, second = (_probabilities(d) for d in shown)
            a, b = (second, first) if order["swapped"] else (first, second)
            values.append(_better(a, b))
    return float(np.mean(values)) if values else None


def _probabilities(distribution: Distribution) -> dict[float, float]:
    """A score distribution's mapped probabilities by value, renormalised to sum to 1."""
    mapped = {float(v): p for v, p in distribution["probabilities"].items()}
    total = sum(mapped.values())
    return {v: p / total for v, p in mapped.items()} if total > 0 else {}


def _better(a: Mapping[float, float], b: Mapping[float, float]) -> float:
    """P(X > Y) + P(X = Y) / 2 for independent X ~ a, Y ~ b (0.5 when either is empty)."""
    if not a or not b:
        return 0.5
    win = sum(pa * pb for x, pa in a.items() for y, pb in b.items() if x > y)
    tie = sum(pa * b.get(x, 0.0) for x, pa in a.items())
    return min(1.0, max(0.0, win + tie / 2))


def has_systems(records: Iterable[VerdictRecord]) -> bool:
    """Whether the records name the systems they judge."""
    return any("system_a" in r or "system" in r for r in records)


def systems_metrics(
    settings: StatisticsSettings, records: Sequence[VerdictRecord]
) -> PairwiseSystems | DirectSystemsMetrics | None:
    """The systems section of metrics.json; None when the records name no systems."""
    if not has_systems(records):
        return None
    if settings.task == "pairwise":
        return _pairwise(settings, records)
    return _direct(records, settings.scales)


def _outcome(label: str | None) -> float:
    """A label as A's share of the win: 1 (A), 0.5 (tie or none), 0 (B)."""
    return OUTCOME[label] if label else 0.5


def decided_comparison(record: VerdictRecord) -> Comparison | None:
    """The comparison one verdict record of two named systems adds to the win rates and the
    leaderboards; None when the panel could not decide it."""
    return _comparison(record, soft_win_probability(record)) if record.get("label") else None


def _comparison(record: VerdictRecord, soft: float | None) -> Comparison:
    return Comparison(
        prompt=str(record.get("prompt", record["item_id"])),
        system_a=str(record.get("system_a")),
        system_b=str(record.get("system_b")),
        outcome=_outcome(record.get("label")),
        soft=soft,
        length_a=int(record.get("words_a", 0)),
        length_b=int(record.get("words_b", 0)),
    )


def _pairwise(settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> PairwiseSystems:
    judged = [r for r in records if "system_a" in r and "system_b" in r]
    decided = [r for r in judged if r.get("label")]
    comparisons = [_comparison(r, soft_win_probability(r)) for r in decided]
    systems = list(dict.fromkeys(s for c in comparisons for s in (c.system_a, c.system_b)))
    against = settings.baseline
    anchor = against if against in systems else (systems[0] if systems else "")
    plain = controlled = None
    error = None
    if len(systems) >= 2:
        try:
            alpha = settings.resolved_alpha
            plain = leaderboard(comparisons, systems, anchor=anchor, resolved_alpha=alpha)
            # Verdicts imported without their texts have no answer lengths to control for.
            if all("words_a" in r for r in decided):
                controlled = leaderboard(
                    comparisons, systems, anchor=anchor, length_control=True, resolved_alpha=alpha
                )
        except ValueError as exc:  # e.g. systems that never meet: their strengths are not identified
            error = str(exc)
    else:
        error = "fewer than two systems have a decided comparison"
    soft = settings.aggregation == "soft"
    # The calibrated estimates keep the comparisons the panel did not decide: their human labels
    # count like any other, the panel's prediction a tie (``calibrated_leaderboard``'s doc).
    every = [_comparison(r, soft_win_probability(r) if r.get("label") else None) for r in judged]
    undecided = [not r.get("label") for r in judged]
    human = [_outcome(label) if (label := r.get("human_label")) else None for r in judged]
    pairs, left_out = _calibrated_pairs(judged, every, undecided, soft=soft)
    calibrated = calibrated_error = None
    try:
        if any(outcome is not None for outcome in human):  # no labels: nothing to calibrate, nothing to say
            calibrated = calibrated_leaderboard(every, human, anchor=anchor, soft=soft, undecided=undecided)
    except ValueError as exc:  # too few labels, or ratings the comparisons cannot pin down
        calibrated_error = str(exc)
    rates = win_rates(comparisons, systems)
    section: PairwiseSystems = {
        "task": "pairwise",
        "comparisons": len(comparisons),
        "undecided": len(judged) - len(decided),
        "anchor": anchor,
        "win_rates": rates,
        "leaderboard": plain,
        "length_controlled": controlled,
        "leaderboard_error": error,
        "calibrated": pairs,
        "calibrated_left_out": left_out,
        "calibrated_leaderboard": calibrated,
        "calibrated_leaderboard_error": calibrated_error,
    }
    if against in systems:
        section["against_baseline"] = against_baseline(comparisons, against, rates)
    return section


def _calibrated_pairs(
    records: Sequence[VerdictRecord], comparisons: Sequence[Comparison], undecided: Sequence[bool], soft: bool
) -> tuple[list[CalibratedPair], list[LeftOutPair]]:
    """Per pair of systems with some (not all) comparisons labelled: the PPI++ win rate, the
    panel's prediction of each item being its comparison's outcome (or soft value), a tie where
    it did not decide (``undecided``); and the pairs with labels that get none, with why."""
    by_pair: dict[tuple[str, str], list[tuple[str | None, Comparison, bool]]] = {}
    for record, comparison, skip in zip(records, comparisons, undecided, strict=True):
        pair = (comparison.system_a, comparison.system_b)
        by_pair.setdefault(pair, []).append((record.get("human_label"), comparison, skip))
    out: list[CalibratedPair] = []
    left_out: list[LeftOutPair] = []
    for (a, b), group in by_pair.items():
        labelled = sum(1 for human, _, _ in group if human)
        reason = None
        if labelled == len(group):
            reason = "every comparison labelled: the human win rate alone is the estimate"
        elif labelled < MIN_LABELLED:
            reason = f"{labelled} labelled comparison; a calibrated win rate needs at least {MIN_LABELLED}"
        if reason is not None:
            if labelled:
                said: LeftOutPair = {
                    "system_a": a,
                    "system_b": b,
                    "labelled": labelled,
                    "comparisons": len(group),
                    "reason": reason,
                }
                if labelled == len(group):
                    said["human_win_rate"] = _human_win_rate(a, b, group)
                left_out.append(said)
            continue
        skipped = np.array([skip for _, _, skip in group])
        predicted, use_soft = tied_predictions([c for _, c, _ in group], skipped, soft)
        estimate = ppi_mean(
            [_outcome(human) for human, _, _ in group if human],
            [p for (human, _, _), p in zip(group, predicted, strict=True) if human],
            [p for (human, _, _), p in zip(group, predicted, strict=True) if not human],
            bounds=(0.0, 1.0),  # a win rate: no interval narrower than every item labelled
        )
        found: CalibratedPair = {
            **estimate,
            "system_a": a,
            "system_b": b,
            "predictions": "soft" if use_soft else "hard",
            "undecided": int(skipped.sum()),
        }
        out.append(found)
    return out, left_out


def _human_win_rate(
    a: str, b: str, group: Sequence[tuple[str | None, Comparison, bool]]
) -> ProportionInterval:
    """The humans' win rate of ``a`` over ``b`` on their labelled comparisons (ties half), by
    the panel's win rates' own method (``win_rates``, prompt-clustered) on the human outcomes."""
    humans = [dataclasses.replace(c, outcome=_outcome(h), soft=None) for h, c, _ in group if h]
    (pair,) = win_rates(humans, [a, b])["pairs"]
    return pair["win_rate"]


def _direct(records: Sequence[VerdictRecord], scales: Scales) -> DirectSystemsMetrics:
    judged = [r for r in records if "system" in r]
    scored = [r for r in judged if r.get("scores")]
    rows = [
        ScoredResponse(
            prompt=str(r.get("prompt", r.get("group", r["item_id"]))),
            system=r["system"],
            scores=dict(r["scores"] or {}),
        )
        for r in scored
    ]
    return {
        "task": "direct",
        "responses": len(rows),
        "unscored": len(judged) - len(scored),
        "scores": direct_systems(rows, scales=scales),
        "calibrated": _calibrated_means(scored),
    }


def _calibrated_means(records: Sequence[VerdictRecord]) -> list[CalibratedMean]:
    """Per system and dimension with some (not all) responses human-scored: the PPI++ mean."""
    by_system: dict[str, list[VerdictRecord]] = {}
    for record in records:
        by_system.setdefault(record["system"], []).append(record)
    out: list[CalibratedMean] = []
    for system, group in by_system.items():
        dimensions = dict.fromkeys(d for r in group for d in (r.get("scores") or {}))
        for dimension in dimensions:
            rows = [r for r in group if dimension in (r.get("scores") or {})]
            labelled = [r for r in rows if dimension in (r.get("human_scores") or {})]
            unlabelled = [r for r in rows if dimension not in (r.get("human_scores") or {})]
            if len(labelled) < MIN_LABELLED or not unlabelled:
                continue

            def panel(r: VerdictRecord, d: str = dimension) -> float:
                return float((r.get("scores") or {})[d])

            estimate = ppi_mean(
                [float((r.get("human_scores") or {})[dimension]) for r in labelled],
                [panel(r) for r in labelled],
                [panel(r) for r in unlabelled],
            )
            out.append({**estimate, "system": system, "dimension": dimension})
    return out
