"""The JudgeBench score (chateval.evaluation.agreement.judgebench) on hand-computed records:
each answer order +1 for the labelled winner, -1 for the other answer, 0 for a tie; right when
the sum is positive; beside it each order's own accuracy."""

from typing import Any

import pytest

from chateval.evaluation.agreement.judgebench import JUDGEBENCH, order_points
from chateval.evaluation.measures import registered_measures
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.verdicts import VerdictRecord

PAIRWISE = StatisticsSettings(task="pairwise", scales={"A": (1, 10), "B": (1, 10)})


def _record(labels: tuple[str | None, ...], human: str | None, referees: int = 1) -> VerdictRecord:
    """A comparison judged in these orders (the first shown as given, the second swapped);
    ``referees`` rows per order, all giving the order's label (a native panel's rows)."""
    orders: list[Any] = [
        {
            "swapped": i == 1,
            "label": label,
            "referees": [{"agent": f"R{k}", "winner": label} for k in range(referees)],
        }
        for i, label in enumerate(labels)
    ]
    return {"item_id": f"i{id(orders)}", "parse_failures": 0, "orders": orders, "human_label": human}


def test_hand_computed_scores() -> None:
    records = [
        _record(("A", "A"), "A"),  # +2: right
        _record(("A", "B"), "A"),  # 0: wrong
        _record(("tie", "A"), "A", referees=3),  # +1: right (a native three-referee panel's labels)
        _record(("B", "tie"), "A"),  # -1: wrong
        _record((None, "B"), "B"),  # a failed order counts 0: +1, right
        _record(("A", "A"), "tie"),  # a tie label names no winner: left out
        _record(("A",), "A"),  # one order: not a JudgeBench pair
        _record(("A", "B"), None),  # unlabelled
    ]
    section = JUDGEBENCH.compute(PAIRWISE, records)
    assert section is not None
    assert (section["pairs"], section["right"], section["tie_labels"]) == (5, 3, 1)
    assert section["sums"] == {"2": 1, "1": 2, "0": 1, "-1": 1, "-2": 0}
    assert section["accuracy"]["value"] == pytest.approx(3 / 5)
    low, high = section["accuracy"]["ci95"]
    assert low < 3 / 5 < high and section["accuracy"]["method"] == "clopper-pearson"
    # Each order's own accuracy on the same 5: original A, A, tie, B, None -> 2 right; swapped
    # A, B, A, tie, B -> 3 right.
    assert section["by_order"]["original"]["value"] == pytest.approx(2 / 5)
    assert section["by_order"]["swapped"]["value"] == pytest.approx(3 / 5)
    text = JUDGEBENCH.text(section)
    assert text.startswith("0.600 [") and "on 5 comparisons judged in both orders (3 right" in text
    assert "1 labelled tie left out" in text
    assert [order_points(v, "A") for v in ("A", "B", "tie", None)] == [1, -1, 0, 0]


def test_unavailable_without_pairs_judged_in_both_orders() -> None:
    one_order = JUDGEBENCH.compute(PAIRWISE, [_record(("A",), "A")])
    assert one_order is not None
    assert JUDGEBENCH.text(one_order) == "unavailable: no comparison was judged in both answer orders"
    unlabelled = JUDGEBENCH.compute(PAIRWISE, [_record(("A", "B"), None), _record(("A", "B"), "tie")])
    assert unlabelled is not None and unlabelled["tie_labels"] == 1
    assert JUDGEBENCH.text(unlabelled).startswith("unavailable: no comparison judged in both answer orders")
    direct = StatisticsSettings(task="direct", scales={"fluency": (1, 5)})
    assert JUDGEBENCH.compute(direct, []) is None


def test_registered_after_position() -> None:
    names = [measure.name for measure in registered_measures()]
    assert names.index("judgebench") == names.index("position") + 1
