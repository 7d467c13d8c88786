"""Does the debate help? The referees' blind opinions, before any discussion, against the
panel's final decision on the same items: is it debate, or just voting?

With ``opinion_probes`` every referee gives a hidden verdict before the discussion (the probe
of round 0, which sees the item and nothing anyone said). Combined the way the final verdicts
are, these give the decision that independent referees would reach by voting alone:

- pairwise, one answer order: the strict majority of the referees' blind labels (tie when no
  label has one), as the final label is the majority of their final ones;
- pairwise, both orders (position calibration): each answer's blind scores summed over the
  referees and both orders, the larger sum wins, as the final label sums the final scores; a
  referee whose blind probe failed to parse in one order is left out of both, as for the final;
- direct: the mean of the referees' blind scores per dimension.

On the items that have both decisions, the comparison is paired
(chateval.evaluation.agreement.paired, ``blind`` against ``final``): each one's agreement with
the humans (accuracy and kappa; direct: Spearman and Kendall), the difference final minus blind
with its interval (that module's doc), and, pairwise, the exact McNemar test on the items only one
of the two got right; plus how many decisions the discussion changed. Hard verdicts only: a
probe's scores are decoded, not read as probabilities.
"""

from collections.abc import Sequence
from statistics import fmean
from typing import Literal, TypeVar, overload

from chateval.evaluation.agreement.correlations import correlations
from chateval.evaluation.agreement.paired import compare_blind_final_direct, compare_blind_final_pairwise
from chateval.judging.aggregate import majority_label, sum_label
from chateval.schema.base import Label
from chateval.schema.paired import DirectDebateEffect, PairwiseDebateEffect
from chateval.schema.verdicts import RefereeRow, VerdictRecord

MAJORITY_RULE = "strict majority of the referees' round-0 probe labels (tie when none has one)"
SUMMED_RULE = "round-0 probe scores summed over the referees and both answer orders, larger wins"
MEAN_RULE = "mean of the referees' round-0 probe scores per dimension"

T = TypeVar("T")


def _rows(record: VerdictRecord) -> list[RefereeRow]:
    if "orders" in record:
        return [row for order in record["orders"] for row in order["referees"]]
    return list(record.get("referees", []))


def _first(values: Sequence[T] | None) -> T | None:
    """The round-0 entry of a referee's probes (they are kept in round order)."""
    return values[0] if values else None


def blind_label(record: VerdictRecord) -> Label | None:
    """The panel's label from its referees' blind (round-0 probe) verdicts; None when none parsed.

    Both orders need ``opinion_scores`` (kept since this comparison exists); without them an
    order's rows count as failed probes.
    """
    orders = record["orders"]
    if len(orders) == 1:
        opinions = [_first(row.get("opinions")) for row in orders[0]["referees"]]
        return majority_label([label for label in opinions if label is not None])
    by_agent: dict[str, list[list[int | float] | None]] = {}
    for order in orders:
        for row in order["referees"]:
            by_agent.setdefault(row["agent"], []).append(_first(row.get("opinion_scores")))
    kept = [
        scores
        for found in by_agent.values()
        if len(found) == len(orders) and None not in found
        for scores in found
        if scores is not None  # never None here; narrows the type
    ]
    if not kept:
        return None
    return sum_label(sum(a for a, _ in kept), sum(b for _, b in kept))


def blind_scores(record: VerdictRecord) -> dict[str, float] | None:
    """The panel's direct scores from its referees' blind verdicts; None when none parsed."""
    blind = [s for row in record.get("referees", []) if isinstance(s := _first(row.get("opinions")), dict)]
    if not blind:
        return None
    return {d: fmean(float(s[d]) for s in blind) for d in blind[0]}


@overload
def debate_effect(
    task: Literal["pairwise"], records: Sequence[VerdictRecord], seed: int = 0
) -> PairwiseDebateEffect | None: ...
@overload
def debate_effect(
    task: Literal["direct"], records: Sequence[VerdictRecord], seed: int = 0
) -> DirectDebateEffect | None: ...
def debate_effect(
    task: Literal["pairwise", "direct"], records: Sequence[VerdictRecord], seed: int = 0
) -> PairwiseDebateEffect | DirectDebateEffect | None:
    """The blind decision against the final one (module doc); None without opinion probes."""
    if not any("opinions" in row for r in records for row in _rows(r)):
        return None
    if task == "pairwise":
        return _pairwise(records)
    return _direct(records, seed)


def _pairwise(records: Sequence[VerdictRecord]) -> PairwiseDebateEffect:
    calibrated = any(len(r["orders"]) > 1 for r in records)
    rule = SUMMED_RULE if calibrated else MAJORITY_RULE
    probed = [row for r in records for row in _rows(r) if "opinions" in row]
    if calibrated and any("opinion_scores" not in row for row in probed):
        return {
            "blind_rule": rule,
            "items": 0,
            "left_out": len(records),
            "changed": 0,
            "unavailable": "the verdicts keep the probes' labels but not their scores (a run of an "
            "earlier release), and with both answer orders the blind decision sums scores",
        }
    both = [(r, b, f) for r in records if (b := blind_label(r)) and (f := r.get("label"))]
    labelled = [(h, b, f) for r, b, f in both if (h := r.get("human_label")) is not None]
    return {
        "blind_rule": rule,
        "items": len(both),
        "left_out": len(records) - len(both),
        "changed": sum(1 for _, b, f in both if b != f),
        "comparison": compare_blind_final_pairwise(
            [h for h, _, _ in labelled], [b for _, b, _ in labelled], [f for _, _, f in labelled]
        )
        if labelled
        else None,
    }


def _direct(records: Sequence[VerdictRecord], seed: int) -> DirectDebateEffect:
    both = [(r, b, f) for r in records if (b := blind_scores(r)) is not None and (f := r.get("scores"))]
    dims = [d for d in (both[0][2] if both else {}) if all(d in b and d in f for _, b, f in both)]
    out: DirectDebateEffect = {
        "blind_rule": MEAN_RULE,
        "items": len(both),
        "left_out": len(records) - len(both),
        "changed": sum(1 for _, b, f in both if any(abs(b[d] - f[d]) > 1e-9 for d in dims)),
        "blind_vs_final_spearman": {
            d: correlations([b[d] for _, b, _ in both], [f[d] for _, _, f in both])["spearman"] for d in dims
        },
        "comparison": None,
    }
    labelled = [(h, r, b, f) for r, b, f in both if (h := r.get("human_scores")) and set(dims) <= set(h)]
    if labelled and dims:
        grouped = all("group" in r for _, r, _, _ in labelled)
        out["comparison"] = compare_blind_final_direct(
            {d: [h[d] for h, _, _, _ in labelled] for d in dims},
            {d: [b[d] for _, _, b, _ in labelled] for d in dims},
            {d: [f[d] for _, _, _, f in labelled] for d in dims},
            seed,
            [r["group"] for _, r, _, _ in labelled] if grouped else None,
        )
    return out
