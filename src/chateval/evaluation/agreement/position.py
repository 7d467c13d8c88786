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
    """``"0.0% of 5 items decisive in either order (winner flips in 40.0%, a tie in the other
    order in 60.0%); 75 of 80 tie in both orders"``; None without items judged in both orders.

    A run of an earlier release has only the old all-items ``consistency`` (tie/tie counted
    as agreement): it is shown as such, so that it is not read as the decisive-item figure.
    """
    if not position or not position.get("items_in_both_orders"):
        return None
    if "decisive_items" not in position:
        old = position.get("consistency")
        return None if old is None else f"{percent(old)} of all items (tie/tie counted as agreement; rescore)"
    both, decisive = position["items_in_both_orders"], position["decisive_items"]
    ties = f"{position.get('tie_in_both_orders')} of {both} tie in both orders"
    if not decisive:
        return f"no item decisive in either order; {ties}"
    same, flips = position.get("decisive_consistency"), position.get("decisive_flip_share")
    # The rest of the decisive items have a winner in one order and a tie in the other.
    one_order = None if same is None or flips is None else max(0.0, 1.0 - same - flips)
    return (
        f"{percent(same)} of {decisive} items decisive in either order "
        f"(winner flips in {percent(flips)}, a tie in the other order in {percent(one_order)}); {ties}"
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
        wins = "no decisive verdicts" if share is None else f"first-position wins {percent(share)}"
        if by_position := section.get("soft_mean_by_position"):
            first, second = by_position["first"], by_position["second"]
            wins += f"; soft mean score shown first {first:.2f}, second {second:.2f}"
        consistency = consistency_text(section)
        return wins if consistency is None else f"{consistency}; {wins}"


POSITION = Position()
