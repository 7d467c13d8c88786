"""Two judges compared on what both judged (``chateval compare``): two runs' panels, or a panel
and a judge whose verdicts were made elsewhere. Every figure rests on the items both judged;
the items each one judged and the other lacks are counted, so that a comparison of a sample
with the whole says so.

- **Agreement between them**, on the items both decided: pairwise, the share of identical
  labels and Cohen's kappa between the two (``pairwise_metrics`` with one judge as the
  reference: its intervals are the validated accuracy and kappa intervals of agreement with
  humans); direct, per dimension the rank correlation of their scores and the share of equal
  scores.
- **Each one against the humans** on the items both judged and humans labelled (an item a
  judge could not decide counts as wrong for it, as in every accuracy here), paired
  (chateval.evaluation.agreement.paired: the difference B - A with its interval, pairwise the
  exact McNemar test).
- **Where they differ most**: the items whose decisions differ, largest gap first (pairwise:
  the panels' summed score margins A minus B; direct: the mean absolute score difference).
"""

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from scipy.stats import kendalltau

from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.agreement.paired import compare_direct_records, compare_pairwise_records
from chateval.schema.judges import BoardComparison, Difference, JudgeComparison
from chateval.schema.systems import Leaderboard
from chateval.schema.verdicts import VerdictRecord

MOST_DIFFERENT = 10  # items listed where the two judges differ most


def _margin(record: VerdictRecord) -> float:
    """The panel's summed score of A minus B (0 when not recorded)."""
    return float(record.get("score_a") or 0) - float(record.get("score_b") or 0)


def _pairwise(a: dict[str, VerdictRecord], b: dict[str, VerdictRecord], shared: list[str], seed: int) -> Any:
    decided = [i for i in shared if a[i].get("label") and b[i].get("label")]
    labels_a = [str(a[i].get("label")) for i in decided]
    labels_b = [str(b[i].get("label")) for i in decided]
    between = pairwise_metrics(labels_a, labels_b, seed) if decided else None
    differing = [i for i in decided if a[i].get("label") != b[i].get("label")]
    found: list[Difference] = [
        {
            "item_id": i,
            "a": str(a[i].get("label")),
            "b": str(b[i].get("label")),
            "human": b[i].get("human_label") or a[i].get("human_label"),
            "gap": abs(_margin(a[i]) - _margin(b[i])),
        }
        for i in differing
    ]
    identical = (len(decided) - len(differing)) / len(decided) if decided else None
    humans = compare_pairwise_records([a[i] for i in shared], [b[i] for i in shared])
    return decided, between, identical, humans, found


def _scores_text(scores: dict[str, float]) -> str:
    return ", ".join(f"{d} {v:g}" for d, v in scores.items())


def _direct(a: dict[str, VerdictRecord], b: dict[str, VerdictRecord], shared: list[str], seed: int) -> Any:
    decided = [i for i in shared if a[i].get("scores") and b[i].get("scores")]
    truth: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    groups: dict[str, list[str]] = {}
    equal = total = 0
    found: list[Difference] = []
    for i in decided:
        scores_a, scores_b = a[i].get("scores") or {}, b[i].get("scores") or {}
        dims = [d for d in scores_a if d in scores_b]
        for d in dims:
            truth.setdefault(d, []).append(scores_a[d])
            predicted.setdefault(d, []).append(scores_b[d])
            groups.setdefault(d, []).append(str(a[i].get("group", "")))
        equal += sum(scores_a[d] == scores_b[d] for d in dims)
        total += len(dims)
        gap = sum(abs(scores_a[d] - scores_b[d]) for d in dims) / len(dims) if dims else 0.0
        if gap:
            human = b[i].get("human_scores") or a[i].get("human_scores")
            found.append(
                {
                    "item_id": i,
                    "a": _scores_text(scores_a),
                    "b": _scores_text(scores_b),
                    "human": _scores_text(human) if human else None,
                    "gap": gap,
                }
            )
    # Grouped items (Topical-Chat's dialogues) resample whole groups, as the headline does.
    grouped = all("group" in a[i] for i in decided)
    between = direct_metrics(truth, predicted, seed, groups if grouped else None) if truth else None
    humans = compare_direct_records([a[i] for i in shared], [b[i] for i in shared], seed)
    return decided, between, (equal / total if total else None), humans, found


def compare_judges(
    task: str, records_a: Sequence[VerdictRecord], records_b: Sequence[VerdictRecord], seed: int = 0
) -> JudgeComparison:
    """Judge B against judge A on the items both judged (module doc); ValueError when they
    share no item."""
    a = {r["item_id"]: r for r in records_a}
    b = {r["item_id"]: r for r in records_b}
    shared = [i for i in a if i in b]
    if not shared:
        raise ValueError("they judged no item in common")
    compare = _pairwise if task == "pairwise" else _direct
    decided, between, identical, humans, found = compare(a, b, shared, seed)
    found.sort(key=lambda d: -d["gap"])
    return {
        "task": task,
        "shared": len(shared),
        "only_a": len(a) - len(shared),
        "only_b": len(b) - len(shared),
        "decided": len(decided),
        "between": between,
        "identical": identical,
        "humans": humans,
        "differences": len(found),
        "most_different": found[:MOST_DIFFERENT],
    }


def tau_bounds(pairs: int, resolved_both: int, resolved_opposite: int) -> list[float]:
    """The range of Kendall's tau (tau-a) between the two judges' orders of the systems with
    unlimited prompts, given what their boards resolve: a pair both resolve the same way is
    ordered alike in both true orders, one they resolve in opposite directions is not, and any
    other pair may go either way (the bound ignores transitivity, so it is wide, never narrow).
    It holds whenever both boards' resolved pairs are right, which each board's Bonferroni rule
    claims at 95%: at least 90% for the two by construction; ``scripts/simulate_intervals.py
    --only boards`` measures how often it holds where ``chateval compare`` uses it."""
    free = pairs - resolved_both - resolved_opposite
    fixed = resolved_both - resolved_opposite
    return [(fixed - free) / pairs, (fixed + free) / pairs]


def compare_boards(board_a: Leaderboard, board_b: Leaderboard) -> BoardComparison | None:
    """Two leaderboards on the systems both rank: their ranks, Kendall's tau-b between the
    ranks, the pairs ordered alike (a shared rank is no order), the pairs each resolves
    (``resolved``: intervals excluding 0 with all pairs' intervals holding at once) the same or
    the opposite way, and from those the bounds of the judges' tau (``tau_bounds``). None when
    they share fewer than two systems."""
    # Ranks, not ratings: equal ratings share a rank (a 4e-9-point optimiser difference is no
    # order), so tau-b counts them as ties and says what the ranked tables show.
    rank_a = {row["system"]: row["rank"] for row in board_a["rows"]}
    rank_b = {row["system"]: row["rank"] for row in board_b["rows"]}
    systems = [s for s in rank_a if s in rank_b]
    if len(systems) < 2:
        return None
    tau = kendalltau([rank_a[s] for s in systems], [rank_b[s] for s in systems]).statistic
    resolved_a = {(hi, lo) for hi, lo in board_a["resolved"] or []}
    resolved_b = {(hi, lo) for hi, lo in board_b["resolved"] or []}
    pairs = list(combinations(systems, 2))
    same = sum((rank_a[x] - rank_a[y]) * (rank_b[x] - rank_b[y]) > 0 for x, y in pairs)
    both = sum(
        (x, y) in resolved_a and (x, y) in resolved_b or (y, x) in resolved_a and (y, x) in resolved_b
        for x, y in pairs
    )
    opposite = sum(
        (x, y) in resolved_a and (y, x) in resolved_b or (y, x) in resolved_a and (x, y) in resolved_b
        for x, y in pairs
    )
    return {
        "systems": systems,
        "ranks": {s: [rank_a[s], rank_b[s]] for s in systems},
        "tau": None if tau != tau else float(tau),  # NaN: a board with every rating equal
        "pairs": len(pairs),
        "same_order": int(same),
        "resolved_both": both,
        "resolved_opposite": opposite,
        "tau_bounds": tau_bounds(len(pairs), both, opposite),
    }
