"""Aggregation on hand-built debates: votes, both answer orders, failures, direct means,
assessments, opinion probes and position statistics."""

from chateval.core.items import DirectItem, PairwiseItem
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.judging.aggregate import (
    aggregate_direct,
    aggregate_pairwise,
    majority_label,
    pairwise_winner,
    position_stats,
    sum_label,
)
from chateval.judging.formats import Dimension, DirectFormat, PairwiseFormat, PairwiseVerdict


def test_winner_maps_back_through_swapped_order() -> None:
    v = PairwiseVerdict(8, 2, "")
    assert pairwise_winner(v, swapped=False) == "A"
    assert pairwise_winner(v, swapped=True) == "B"
    assert pairwise_winner(PairwiseVerdict(5, 5, ""), swapped=True) == "tie"


def test_majority_vote() -> None:
    assert majority_label(["A", "A", "B"]) == "A"
    assert majority_label(["A", "B"]) == "tie"
    assert majority_label(["A", "tie"]) == "tie"
    assert majority_label(["B"]) == "B"
    assert majority_label([]) is None


def test_unparseable_verdict_is_a_recorded_failure_not_a_tie() -> None:
    item = PairwiseItem("x", "q", "a", "b", "A")
    transcript = Transcript(
        (
            Utterance(
                Turn(0, 0, "verdict"), "Critic", "verdict", "Assistant 1: 9\nAssistant 2: 2\nEvidence: ok"
            ),
            Utterance(Turn(0, 1, "verdict"), "Editor", "verdict", "no idea", "length"),
        )
    )
    record = aggregate_pairwise([Debate("x", item, transcript=transcript)], PairwiseFormat())
    assert record["parse_failures"] == 1
    assert record["label"] == "A"  # the one parsed vote is a strict majority of the votes cast
    assert record["orders"][0]["referees"][1]["raw"] == "no idea"
    assert "error" in record["orders"][0]["referees"][1]
    assert record["referee_labels"] == {"Critic": "A"}


def _order(key: str, swapped: bool, critic: str, editor: str) -> Debate:
    item = PairwiseItem("x", "q", "a", "b", "A")
    transcript = Transcript(
        (
            Utterance(Turn(0, 0, "verdict"), "Critic", "verdict", critic),
            Utterance(Turn(0, 1, "verdict"), "Editor", "verdict", editor),
        )
    )
    return Debate(key, item, swapped, transcript)


def test_a_referee_failing_in_one_order_is_left_out_of_both() -> None:
    """Editor's verdict fails in the swapped order; counting its first-order scores alone would
    add 9 to A and 1 to B and turn the item to A. Left out of both orders, the item ties."""
    first = _order("x", False, "Assistant 1: 5\nAssistant 2: 5", "Assistant 1: 9\nAssistant 2: 1")
    swapped = _order("x#swapped", True, "Assistant 1: 6\nAssistant 2: 6", "no scores")
    record = aggregate_pairwise([first, swapped], PairwiseFormat())
    assert record["excluded_referees"] == ["Editor"]
    assert (record["score_a"], record["score_b"], record["label"]) == (11, 11, "tie")
    assert record["referee_labels"] == {"Critic": "tie"}
    assert record["orders"][0]["label"] == "tie"  # Editor's first-order vote is not counted either
    assert record["orders"][0]["referees"][1]["score_a"] == 9  # but its scores stay on record
    assert record["parse_failures"] == 1


def test_an_item_whose_every_referee_failed_is_not_scored() -> None:
    first = _order("x", False, "?", "Assistant 1: 9\nAssistant 2: 1")
    swapped = _order("x#swapped", True, "Assistant 1: 6\nAssistant 2: 6", "?")
    record = aggregate_pairwise([first, swapped], PairwiseFormat())
    assert record["excluded_referees"] == ["Critic", "Editor"]
    assert record["label"] is None and record["referee_labels"] == {}


def test_summed_scores_over_both_orders_decide_against_the_majority() -> None:
    """BPC: Critic prefers A by a lot, Editor B by a little, in both orders: the sums give A
    although the referees split."""
    first = _order("x", False, "Assistant 1: 9\nAssistant 2: 2", "Assistant 1: 5\nAssistant 2: 6")
    swapped = _order("x#swapped", True, "Assistant 1: 3\nAssistant 2: 8", "Assistant 1: 6\nAssistant 2: 5")
    record = aggregate_pairwise([first, swapped], PairwiseFormat())
    assert (record["score_a"], record["score_b"], record["label"]) == (27, 17, "A")
    assert record["referee_labels"] == {"Critic": "A", "Editor": "B"}
    assert [o["label"] for o in record["orders"]] == ["tie", "tie"]  # one vote each way
    assert [r["winner"] for r in record["orders"][1]["referees"]] == ["A", "B"]  # mapped back to A/B
    assert [r["winner_shown"] for r in record["orders"][1]["referees"]] == ["2", "1"]


def test_sum_label_ignores_rounding_noise() -> None:
    assert sum_label(0.1 + 0.2, 0.3) == "tie"
    assert sum_label(7.0000001, 7.0) == "tie"
    assert sum_label(7.01, 7.0) == "A"


DIMS = [Dimension("naturalness", "d", 1, 3), Dimension("groundedness", "d", 0, 1)]


def test_direct_scores_are_the_mean_of_the_parsed_referees() -> None:
    item = DirectItem("d", "context", "response")
    said = (
        Utterance(Turn(0, 0, "verdict"), "Critic", "assessment", "Reads well."),
        Utterance(
            Turn(0, 0, "verdict", scoring=True), "Critic", "verdict", "Naturalness: 3\nGroundedness: 1"
        ),
        Utterance(Turn(0, 1, "verdict"), "Editor", "assessment", "Stilted."),
        Utterance(
            Turn(0, 1, "verdict", scoring=True), "Editor", "verdict", "Naturalness: 2\nGroundedness: 0"
        ),
        Utterance(Turn(0, 2, "verdict"), "Reader", "assessment", "Hmm."),
        Utterance(Turn(0, 2, "verdict", scoring=True), "Reader", "verdict", "Naturalness: x", "length"),
    )
    record = aggregate_direct(Debate("d", item, transcript=Transcript(said)), DirectFormat(DIMS))
    assert record["scores"] == {"naturalness": 2.5, "groundedness": 0.5}
    assert record["parse_failures"] == 1
    assert [r.get("assessment") for r in record["referees"]] == ["Reads well.", "Stilted.", "Hmm."]
    assert record["referees"][2]["raw"] == "Naturalness: x"
    assert "soft_scores" not in record  # no distributions were read


def test_probe_verdicts_become_opinions_in_round_order() -> None:
    """A referee said A before the discussion (round 0 probe, asked last) and at a round-1
    check, then gave B as its verdict."""
    item = PairwiseItem("x", "q", "a", "b", "A")
    said = (
        Utterance(Turn(1, 0, "check"), "Critic", "probe", "Assistant 1: 7\nAssistant 2: 3"),
        Utterance(Turn(1, 0, "verdict"), "Critic", "verdict", "Assistant 1: 2\nAssistant 2: 8"),
        Utterance(Turn(0, 0, "probe"), "Critic", "probe", "Assistant 1: 9\nAssistant 2: 1"),
    )
    record = aggregate_pairwise(
        [Debate("x", item, transcript=Transcript(said))], PairwiseFormat(), opinions=True
    )
    assert record["orders"][0]["referees"][0]["opinions"] == ["A", "A"]
    assert record["label"] == "B"


def test_position_stats_count_first_shown_wins_and_order_agreement() -> None:
    first = _order("x", False, "Assistant 1: 9\nAssistant 2: 2", "Assistant 1: 5\nAssistant 2: 5")
    swapped = _order("x#swapped", True, "Assistant 1: 9\nAssistant 2: 2", "Assistant 1: 8\nAssistant 2: 2")
    record = aggregate_pairwise([first, swapped], PairwiseFormat())
    stats = position_stats([record])
    assert stats["items_in_both_orders"] == 1
    # Tie (A and a tie vote), then B (shown first): decisive in one order, not consistent.
    assert (stats["decisive_items"], stats["decisive_consistency"]) == (1, 0.0)
    assert stats["decisive_flip_share"] == 0.0  # a winner against a tie is no flip
    assert (stats["decisive_verdicts"], stats["first_position_win_share"]) == (3, 1.0)
    assert "soft_mean_by_position" not in stats


def test_position_stats_without_decisive_verdicts_say_none() -> None:
    tie = _order("x", False, "Assistant 1: 5\nAssistant 2: 5", "Assistant 1: 4\nAssistant 2: 4")
    stats = position_stats([aggregate_pairwise([tie], PairwiseFormat())])
    assert stats["first_position_win_share"] is None and stats["decisive_consistency"] is None


def test_the_2023_rule_makes_an_item_with_a_failed_verdict_a_tie() -> None:
    """Critic prefers A in both orders; Editor's swapped verdict fails. Left out (the default),
    the item goes to A; under the 2023 code's rule (``failure_ties``) it is a tie."""
    first = _order("x", False, "Assistant 1: 9\nAssistant 2: 2", "Assistant 1: 3\nAssistant 2: 8")
    swapped = _order("x#swapped", True, "Assistant 1: 2\nAssistant 2: 9", "no scores")
    assert aggregate_pairwise([first, swapped], PairwiseFormat())["label"] == "A"
    record = aggregate_pairwise([first, swapped], PairwiseFormat(), failure_ties=True)
    assert record["label"] == "tie" and record["parse_failures"] == 1
    assert record["referee_labels"] == {"Critic": "A"}  # each referee's own label is kept
