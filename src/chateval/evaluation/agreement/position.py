"""How the answer order moves a pairwise panel, as a registered measure
(chateval.evaluation.measures) at metrics.json's ``position``: of the items judged in both
orders, how often a decisive one keeps its winner, and the share of the referees' decisive
verdicts that went to the answer shown first (chateval.judging.aggregate.position_stats).
"""

from collections.abc import Sequence

from chateval.core.formatting import percent
from chateval.evaluation.settings import StatisticsSettings
from chateval.judging.aggregate import position_stats
from chateval.schema.agreement import PositionStats
from chateval.schema.verdicts import VerdictRecord


def consistency_text(position: PositionStats | None) -> str | None:
    """``"0.0% of the 5 items with a winner in at least one answer order keep that winner when
    the answers swap places (the other answer wins in 40.0%; one order is a tie in 60.0%); 75
    of 80 items tie in both orders"``; None without items judged in both orders.

    A run of an earlier release has only the old all-items ``consistency`` (tie/tie counted
    as agreement): it is shown as such, so that it is not read as the decisive-item figure.
    """
    if not position or not position.get("items_in_both_orders"):
        return None
    if "decisive_items" not in position:
        old = position.get("consistency")
        if old is None:
            return None
        return (
            f"{percent(old)} of all items get the same verdict in both answer orders (a tie in "
            "both counted as the same; chateval rescore counts those apart)"
        )
    both, decisive = position["items_in_both_orders"], position["decisive_items"]
    ties = f"{position.get('tie_in_both_orders')} of {both} items tie in both orders"
    if not decisive:
        return f"no item has a winner in either answer order; {ties}"
    same, flips = position.get("decisive_consistency"), position.get("decisive_flip_share")
    # The rest of the decisive items have a winner in one order and a tie in the other.
    one_order = None if same is None or flips is None else max(0.0, 1.0 - same - flips)
    return (
        f"{percent(same)} of the {decisive} items with a winner in at least one answer order keep "
        f"that winner when the answers swap places (the other answer wins in {percent(flips)}; "
        f"one order is a tie in {percent(one_order)}); {ties}"
    )


class Position:
    """Position consistency and the first position's share of wins (module doc)."""

    name = "position"
    title = "position consistency"
    top_level = True

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> PositionStats | None:
        return position_stats(records) if settings.task == "pairwise" else None

    def text(self, section: PositionStats | None) -> str:
        """The consistency over decisive items, then the first position's share of the wins
        (and, with soft verdicts, the mean score by position)."""
        if not section:
            return "-"
        share = section["first_position_win_share"]
        # No decisive verdict means no evidence either way, not a 0% share.
        wins = (
            "no referee's verdict named a winner"
            if share is None
            else f"the answer shown first won {percent(share)} of the referees' verdicts with a winner "
            "(50%: no preference for a position)"
        )
        if by_position := section.get("soft_mean_by_position"):
            first, second = by_position["first"], by_position["second"]
            wins += f"; mean soft score of the answer shown first {first:.2f}, shown second {second:.2f}"
        consistency = consistency_text(section)
        return wins if consistency is None else f"{consistency}; {wins}"


POSITION = Position()
