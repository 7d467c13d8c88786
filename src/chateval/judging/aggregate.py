"""Turning referees' final utterances into verdicts and a panel decision per item.

Pairwise: each referee's winner is the higher-scored answer (equal scores: tie), mapped back
from displayed position to A/B. Without position calibration the panel's label is the strict
majority of referees (tie when no label has one). With it, every item is debated in both
orders and the label comes from the summed scores (FairEval's BPC): each answer's scores summed
over both orders and all referees; the larger sum wins, equal sums tie.
Direct: the panel's score per dimension is the mean over referees.
A verdict that does not parse is recorded as a failure with its raw text, never as a tie.

Soft verdicts (when the scores came with token probabilities, ``chateval.judging.soft``): each score's
expected value stands in for the decoded one. Pairwise: the expected scores summed over the
referees and both answer orders, larger wins (``soft_label``); direct: the mean of the referees'
expected scores (``soft_scores``). An item gets a soft decision only when every referee counted
for its hard decision has distributions.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from chateval.core.distributions import ScoreDistribution
from chateval.core.items import PairwiseItem
from chateval.core.transcript import Debate
from chateval.errors import VerdictError
from chateval.judging.formats import (
    DirectFormat,
    DirectVerdict,
    PairwiseFormat,
    PairwiseVerdict,
    Score,
    VerdictFormat,
)
from chateval.schema.agreement import PositionStats
from chateval.schema.base import Label
from chateval.schema.verdicts import OrderRecord, RefereeRow, VerdictRecord


@dataclass(frozen=True)
class RefereeVerdict:
    """One referee's parsed verdict, or the raw text and error when it failed to parse.

    ``assessment`` is what the referee wrote before its scores (None without reasoning);
    ``distributions`` its scores' distributions, in score-line order (None: not read).
    """

    agent: str
    raw: str
    verdict: PairwiseVerdict | DirectVerdict | None
    error: str | None = None
    assessment: str | None = None
    distributions: tuple[ScoreDistribution, ...] | None = None

    def expected(self) -> list[float] | None:
        """Each score's expected value, or None unless every one can be read."""
        if self.distributions is None:
            return None
        values = [d.expected for d in self.distributions]
        return None if any(v is None for v in values) else [float(v) for v in values if v is not None]


def referee_verdicts(debate: Debate, fmt: VerdictFormat, kind: str = "verdict") -> list[RefereeVerdict]:
    """Parse the final utterance of each referee of ``debate`` (or, ``kind="probe"``, its probes)."""
    assessments = {u.turn.scored(): u.text for u in debate.transcript.utterances if u.kind == "assessment"}
    out = []
    for utterance in debate.transcript.utterances:
        if utterance.kind != kind:
            continue
        assessment = assessments.get(utterance.turn) if utterance.turn.scoring else None
        try:
            verdict = fmt.parse(utterance.text)
            out.append(
                RefereeVerdict(
                    utterance.speaker, utterance.text, verdict, None, assessment, utterance.distributions
                )
            )
        except VerdictError as exc:
            out.append(RefereeVerdict(utterance.speaker, utterance.text, None, str(exc), assessment))
    return out


def pairwise_winner(verdict: PairwiseVerdict, swapped: bool) -> Label:
    """The winner in item terms (A/B) of a verdict given on the shown order."""
    shown = verdict.winner_shown
    if shown == "tie":
        return "tie"
    first_is_a = not swapped
    return "A" if (shown == "1") == first_is_a else "B"


def majority_label(labels: Sequence[Label]) -> Label | None:
    """Strict majority of ``labels``; tie when none has one; None when there are no labels."""
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if count * 2 > len(labels) else "tie"


def sum_label(score_a: float, score_b: float) -> Label:
    """The label of summed scores: larger sum wins, equal sums tie.

    Sums of expected scores are compared at 6 decimals, so that the same scores added in
    another order cannot break a tie by a rounding error.
    """
    score_a, score_b = round(score_a, 6), round(score_b, 6)
    if score_a > score_b:
        return "A"
    if score_b > score_a:
        return "B"
    return "tie"


def _soft_pairwise(row: RefereeRow, ref: RefereeVerdict, swapped: bool) -> None:
    """Add a referee's distributions and expected scores (in A/B terms) to its row."""
    expected = ref.expected()
    if ref.distributions is None or expected is None:
        return
    row["distributions"] = [d.as_dict() for d in ref.distributions]  # in the order shown
    soft_a, soft_b = (expected[1], expected[0]) if swapped else (expected[0], expected[1])
    row["soft_score_a"] = round(soft_a, 4)
    row["soft_score_b"] = round(soft_b, 4)


def _probes(debate: Debate, fmt: VerdictFormat) -> dict[str, list[PairwiseVerdict | DirectVerdict | None]]:
    """Each referee's probe verdicts in round order (None where one failed to parse)."""
    rounds = [u.turn.round for u in debate.transcript.utterances if u.kind == "probe"]
    out: dict[str, list[tuple[int, PairwiseVerdict | DirectVerdict | None]]] = {}
    for round_, ref in zip(rounds, referee_verdicts(debate, fmt, kind="probe"), strict=True):
        out.setdefault(ref.agent, []).append((round_, ref.verdict))
    # Early-stop checks come mid-debate and the before-discussion probe at the end: by round.
    return {agent: [v for _, v in sorted(pairs, key=lambda p: p[0])] for agent, pairs in out.items()}


def _with_assessment(row: RefereeRow, ref: RefereeVerdict) -> RefereeRow:
    if ref.assessment is not None:
        row["assessment"] = ref.assessment
    return row


def _pairwise_order(
    debate: Debate,
    referees: Sequence[RefereeVerdict],
    fmt: PairwiseFormat,
    opinions: bool,
    excluded: frozenset[str],
) -> OrderRecord:
    probes = _probes(debate, fmt) if opinions else {}
    rows: list[RefereeRow] = []
    votes: list[Label] = []
    for ref in referees:
        row: RefereeRow = {"agent": ref.agent}
        if isinstance(ref.verdict, PairwiseVerdict):
            v = ref.verdict
            winner = pairwise_winner(v, debate.swapped)
            if ref.agent not in excluded:
                votes.append(winner)
            score_a, score_b = _item_scores(v, debate.swapped)
            row |= {
                "score_a": score_a,
                "score_b": score_b,
                "winner": winner,
                "winner_shown": v.winner_shown,
                "evidence": v.evidence,
            }
            _soft_pairwise(row, ref, debate.swapped)
        else:
            row |= {"error": ref.error, "raw": ref.raw}
        if ref.agent in probes:
            row["opinions"] = [
                pairwise_winner(p, debate.swapped) if isinstance(p, PairwiseVerdict) else None
                for p in probes[ref.agent]
            ]
            # The scores too, in A/B terms: a calibrated blind decision sums them over both
            # orders as the final label sums the final scores (chateval.evaluation.agreement.debate_effect).
            row["opinion_scores"] = [
                _item_scores(p, debate.swapped) if isinstance(p, PairwiseVerdict) else None
                for p in probes[ref.agent]
            ]
        rows.append(_with_assessment(row, ref))
    return {"swapped": debate.swapped, "label": majority_label(votes), "referees": rows}


def _item_scores(verdict: PairwiseVerdict, swapped: bool) -> list[Score]:
    """[score of A, score of B] of a verdict given on the shown order."""
    return [verdict.score_2, verdict.score_1] if swapped else [verdict.score_1, verdict.score_2]


def aggregate_pairwise(
    debates: Sequence[Debate], fmt: PairwiseFormat, opinions: bool = False, failure_ties: bool = False
) -> VerdictRecord:
    """The verdict record of one pairwise item, debated in one order or in both.

    A referee whose verdict failed to parse in one order is left out of both orders (their
    labels and summed scores), so a failure cannot tilt the item toward the answer that
    happened to be shown first in the order that parsed; ``excluded_referees`` names them.
    ``failure_ties`` (the 2023 code's rule): instead, an item with any failed verdict is a tie,
    hard and soft. ``opinions``: attach each referee's probe verdicts (runs with opinion probes).
    """
    parsed_orders = [referee_verdicts(d, fmt) for d in debates]
    failed = frozenset(ref.agent for refs in parsed_orders for ref in refs if ref.verdict is None)
    orders = [
        _pairwise_order(d, refs, fmt, opinions, failed)
        for d, refs in zip(debates, parsed_orders, strict=True)
    ]
    parsed = [r for o in orders for r in o["referees"] if "error" not in r and r["agent"] not in failed]
    failures = sum(1 for o in orders for r in o["referees"] if "error" in r)
    referee_labels: dict[str, Label] = {}
    soft_referee_labels: dict[str, Label] = {}
    for agent in dict.fromkeys(r["agent"] for r in parsed):
        mine = [r for r in parsed if r["agent"] == agent]
        referee_labels[agent] = sum_label(sum(r["score_a"] for r in mine), sum(r["score_b"] for r in mine))
        if all("soft_score_a" in r for r in mine):
            soft_referee_labels[agent] = _summed(mine, soft=True)[2]
    record: VerdictRecord = {
        "item_id": debates[0].item.id,
        "orders": orders,
        "referee_labels": referee_labels,
        "parse_failures": failures,
        "excluded_referees": sorted(failed),
    }
    if len(debates) > 1:
        score_a, score_b, label = _summed(parsed, soft=False)
        record |= {"score_a": score_a, "score_b": score_b, "label": label if parsed else None}
    else:
        record["label"] = orders[0]["label"]
    if parsed and all("soft_score_a" in r for r in parsed):
        soft_a, soft_b, soft_label = _summed(parsed, soft=True)
        record |= {
            "soft_score_a": round(soft_a, 4),
            "soft_score_b": round(soft_b, 4),
            "soft_label": soft_label,
            "soft_referee_labels": soft_referee_labels,
        }
    if failure_ties and failures:
        record["label"] = "tie"
        if "soft_label" in record:
            record["soft_label"] = "tie"
    return record


def add_pairwise_item(record: VerdictRecord, item: PairwiseItem) -> None:
    """Add to ``record`` what it keeps of its ``item``: the human label, the prompt, and the
    systems with their answers' lengths in words, when the item has them (records of items
    without them stay as they were)."""
    record["human_label"] = item.label
    if item.prompt is not None:
        record["prompt"] = item.prompt
    if item.system_a is not None or item.system_b is not None:
        record |= {
            "system_a": item.system_a,
            "system_b": item.system_b,
            "words_a": len(item.answer_a.split()),
            "words_b": len(item.answer_b.split()),
        }


def _summed(rows: Sequence[RefereeRow], soft: bool) -> tuple[float, float, Label]:
    """Scores (expected ones when ``soft``) of A and of B summed over ``rows``, and the label
    of the sums."""
    pairs = [(r["soft_score_a"], r["soft_score_b"]) if soft else (r["score_a"], r["score_b"]) for r in rows]
    score_a = sum(a for a, _ in pairs)
    score_b = sum(b for _, b in pairs)
    return score_a, score_b, sum_label(score_a, score_b)


def aggregate_direct(debate: Debate, fmt: DirectFormat, opinions: bool = False) -> VerdictRecord:
    """The verdict record of a direct-scoring item (``opinions``: attach probe verdicts)."""
    referees = referee_verdicts(debate, fmt)
    probes = _probes(debate, fmt) if opinions else {}
    rows: list[RefereeRow] = []
    parsed: list[DirectVerdict] = []
    soft: list[dict[str, float]] = []
    names = [d.name for d in fmt.dimensions]
    for ref in referees:
        if isinstance(ref.verdict, DirectVerdict):
            parsed.append(ref.verdict)
            row: RefereeRow = {
                "agent": ref.agent,
                "scores": dict(ref.verdict.scores),
                "evidence": ref.verdict.evidence,
            }
            expected = ref.expected()
            if ref.distributions is not None and expected is not None:
                row["distributions"] = {n: d.as_dict() for n, d in zip(names, ref.distributions, strict=True)}
                soft_scores = {n: round(v, 4) for n, v in zip(names, expected, strict=True)}
                row["soft_scores"] = soft_scores
                soft.append(soft_scores)
        else:
            row = {"agent": ref.agent, "error": ref.error, "raw": ref.raw}
        if ref.agent in probes:
            row["opinions"] = [
                dict(p.scores) if isinstance(p, DirectVerdict) else None for p in probes[ref.agent]
            ]
        rows.append(_with_assessment(row, ref))
    scores = {n: fmean(v.scores[n] for v in parsed) for n in names} if parsed else None
    failures = len(referees) - len(parsed)
    record: VerdictRecord = {
        "item_id": debate.item.id,
        "referees": rows,
        "scores": scores,
        "parse_failures": failures,
    }
    if parsed and len(soft) == len(parsed):
        record["soft_scores"] = {n: round(fmean(s[n] for s in soft), 4) for n in names}
    return record


def position_stats(records: Sequence[VerdictRecord]) -> PositionStats:
    """Position bias of pairwise records.

    Of the items debated in both orders, compared on the two order-level panel labels (in A/B
    terms): ``tie_in_both_orders`` counts those where both orders tie, reported apart because
    two ties agree without showing that the panel can tell the answers apart at all;
    ``decisive_items`` those where at least one order picks a winner; of these,
    ``decisive_consistency`` is the share with the same winner in both orders and
    ``decisive_flip_share`` the share whose winner flips with the order (null without
    decisive items). ``first_position_win_share``: among referee verdicts with a winner, the
    share that went to the answer shown first (0.5 means no position preference).
    ``soft_mean_by_position``: the mean expected score of the answer shown first and of the one
    shown second (soft verdicts only; a gap is a position bias that summing both orders must
    cancel, leaving the soft decision to what remains).
    """
    both = [(r["orders"][0]["label"], r["orders"][1]["label"]) for r in records if len(r["orders"]) == 2]
    # An order without a label lost every verdict (left out of both orders alike): no evidence.
    labelled = [(x, y) for x, y in both if x is not None and y is not None]
    decisive = [(x, y) for x, y in labelled if (x, y) != ("tie", "tie")]
    flips = sum(1 for x, y in decisive if "tie" not in (x, y) and x != y)
    shown = [
        ref["winner_shown"]
        for r in records
        for o in r["orders"]
        for ref in o["referees"]
        if ref.get("winner_shown") in ("1", "2")
    ]
    expected = [
        [d["expected"] for d in distributions]
        for r in records
        for o in r["orders"]
        for ref in o["referees"]
        if isinstance(distributions := ref.get("distributions"), list)
    ]
    stats: PositionStats = {
        "items_in_both_orders": len(both),
        "tie_in_both_orders": len(labelled) - len(decisive),
        "decisive_items": len(decisive),
        "decisive_consistency": sum(1 for x, y in decisive if x == y) / len(decisive) if decisive else None,
        "decisive_flip_share": flips / len(decisive) if decisive else None,
        "decisive_verdicts": len(shown),
        "first_position_win_share": shown.count("1") / len(shown) if shown else None,
    }
    if expected:
        stats["soft_mean_by_position"] = {
            "first": fmean(e[0] or 0.0 for e in expected),
            "second": fmean(e[1] or 0.0 for e in expected),
        }
    return stats
