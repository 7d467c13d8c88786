"""Copying or collapse, scores at the scale's ends and recitation of the item, on hand-built
debates (chateval.evaluation.diagnostics.verdict_collapse, panel_behaviour, diagnostics_text)."""

import copy

import pytest

from chateval.core.items import PairwiseItem
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.debate.behaviour import EchoDetector, debate_behaviour
from chateval.debate.building import build_panel
from chateval.evaluation.diagnostics.parroting import NOT_RECORDED
from chateval.evaluation.diagnostics.summary import per_model
from chateval.evaluation.diagnostics.text import degenerate_reasons, verdict_copy_text
from chateval.evaluation.diagnostics.verdict_collapse import (
    CONSTANT_MIN_VERDICTS,
    copying_verdict,
    pairwise_scales,
    permutation_chance,
)
from chateval.evaluation.run_metrics import compute_metrics
from chateval.run.records import item_records
from chateval.run.statistics import statistics_settings
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import run_diagnostics, tiny_config

# one_by_one, Critic then Everyday Reader, 2 rounds: the reader sees the critic's verdict.
CONFIG = tiny_config(position_calibration=False)
PANEL = build_panel(CONFIG)
LAST = PANEL.rounds - 1
SCALES = pairwise_scales(1, 10)
QUESTION = "What is the boiling point of water at sea level in degrees Celsius?"


def scores(first: int, second: int) -> str:
    return f"Assistant 1: {first}\nAssistant 2: {second}"


def debate(item_id: str, critic: str, reader: str, talk: str = "The first answer is right.") -> Debate:
    """A one-by-one debate: each referee talks, then the critic's verdict, then the reader's."""
    said = (
        (Turn(0, 0), "Critic", "discussion", talk),
        (Turn(0, 1), "Everyday Reader", "discussion", "I see it the same way, more or less."),
        (Turn(LAST, 0, "verdict"), "Critic", "assessment", "A names the right temperature."),
        (Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", critic),
        (Turn(LAST, 1, "verdict"), "Everyday Reader", "assessment", "A is the one I would trust."),
        (Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", reader),
    )
    item = PairwiseItem(item_id, QUESTION, "100 degrees Celsius.", "It depends on the pot.", "A")
    utterances = tuple(Utterance(t, s, k, x) for t, s, k, x in said)  # type: ignore[arg-type]
    return Debate(item_id, item, transcript=Transcript(utterances))


def records_of(debates: list[Debate]) -> list[VerdictRecord]:
    return [r for d in debates for r in item_records([d], PANEL)]


ITEMS = 6  # more than CONSTANT_MIN_VERDICTS: a referee that never varies is called constant
TOP = records_of([debate(f"t{i}", scores(10, 10), scores(10, 10)) for i in range(ITEMS)])
COPIED = records_of(
    [debate(f"c{i}", scores(i + 2, 9 - i), scores(i + 2, 9 - i)) for i in range(ITEMS)]  # varied, copied
)


def test_a_panel_giving_everything_ten_is_collapse_not_copying() -> None:
    """Every referee gives 10/10 on every item: the reader's verdict equals the critic's it
    saw, and equals the critic's on every other item as often. The warning names the ceiling
    and the constant referees, and calls the equality collapse, never copying."""
    assert ITEMS >= CONSTANT_MIN_VERDICTS
    diagnostics = run_diagnostics(TOP, SCALES)
    parroting = diagnostics["parroting"]
    assert parroting is not None
    assert parroting["copy_share"] == 1.0
    assert parroting["copy_permutation_chance"] == 1.0 and parroting["copy_permutation_verdicts"] == ITEMS
    assert copying_verdict(parroting) == "collapse, not copying"
    assert verdict_copy_text(parroting).endswith("on another item 100.0%): collapse, not copying")
    ceiling = diagnostics["ceiling"]
    assert ceiling is not None
    assert (ceiling["verdicts"], ceiling["at_top"], ceiling["top_share"]) == (2 * ITEMS, 2 * ITEMS, 1.0)
    assert ceiling["bottom_share"] == 0.0
    assert ceiling["constant_referees"] == ["Critic", "Everyday Reader"]
    reasons = degenerate_reasons(diagnostics)
    assert reasons == [
        "verdicts equal to one seen 100%, but a referee's verdict on another item matches as often "
        "(100%): collapse, not copying",
        "100% of verdicts give every score the scale's top",
        "scores never vary: Critic, Everyday Reader",
    ]
    assert not any(reason.endswith(": copying") for reason in reasons)


def test_a_referee_copying_varied_scores_is_copying() -> None:
    """The reader gives exactly the critic's scores, which differ from item to item: equal to
    the one seen every time, to the critic's on another item never."""
    [record, *_] = COPIED
    reader = record["orders"][0]["referees"][1]
    assert reader["parroting"]["saw_verdicts_of"] == ["Critic"]
    assert permutation_chance(COPIED) == (ITEMS, 0.0, None)
    diagnostics = run_diagnostics(COPIED, SCALES)
    parroting = diagnostics["parroting"]
    assert parroting is not None and parroting["copy_share"] == 1.0
    assert copying_verdict(parroting) == "copying"
    assert verdict_copy_text(parroting) == (
        f"100.0% of {ITEMS} verdicts (no chance rate to compare: no two referees gave verdicts before "
        "seeing another's words; on another item 0.0%): copying"
    )
    assert degenerate_reasons(diagnostics) == [
        "100% of verdicts that saw another referee's equal it, against 0% on another item: copying"
    ]
    # Per model: the critic saw no verdict, so its model has nothing to compare.
    models = per_model("pairwise", COPIED, {"Critic": "a", "Everyday Reader": "b"}, 0, scales=SCALES)
    critic, copier = models["a"]["parroting"], models["b"]["parroting"]
    assert critic is not None and critic["copy_permutation_chance"] is None
    assert critic["copy_permutation_chance_reason"] == "no verdict saw another referee's"
    assert copier is not None and copier["copy_permutation_chance"] == 0.0


def test_copying_beyond_collapse() -> None:
    """FairEval's panel (issue 37): 10/10 almost everywhere, and the second referee repeats the
    first one's scores where they are not 10/10 too. Equal on another item 4 times in 6 on
    average; equal to the one seen always: copying, on top of the collapse."""
    debates = [debate(f"f{i}", scores(10, 10), scores(10, 10)) for i in range(ITEMS - 1)]
    records = records_of([*debates, debate("f5", scores(9, 8), scores(9, 8))])
    assert permutation_chance(records) == (ITEMS, pytest.approx(4 / 6), None)
    parroting = run_diagnostics(records)["parroting"]
    assert parroting is not None and copying_verdict(parroting) == "copying, beyond collapse"


def test_records_of_earlier_releases_infer_whose_verdict_was_seen() -> None:
    """Rows without ``saw_verdicts_of``: in one-by-one talk a verdict saw the ones given
    before it, the rows before its own; unless ``copied_from`` names another, then unknown."""
    older = copy.deepcopy(COPIED)
    for record in older:
        for row in record["orders"][0]["referees"]:
            row["parroting"].pop("saw_verdicts_of")
    assert permutation_chance(older) == permutation_chance(COPIED)
    older[0]["orders"][0]["referees"][1]["parroting"]["copied_from"] = "Someone Else"
    assert permutation_chance(older) == (None, None, NOT_RECORDED)


def test_the_permutation_chance_pairs_debates_of_the_same_answer_order_only() -> None:
    """Both answer orders of two items: a verdict is compared with the seen referee's in the
    other item's debate of its own order, never with the other order's."""
    critic = {(0, False): (7, 2), (0, True): (2, 7), (1, False): (7, 2), (1, True): (3, 3)}

    def order(item: int, swapped: bool) -> Debate:
        first, second = critic[(item, swapped)]
        found = debate(f"o{item}", scores(first, second), scores(7, 2))
        found.swapped = swapped
        return found

    records = [item_records([order(i, False), order(i, True)], PANEL)[0] for i in (0, 1)]
    # The reader always writes 7/2; the critic did on both unswapped debates, then 2/7 and 3/3.
    # Unswapped: each reader verdict equals the critic's on the other item (2 of 2); swapped:
    # the critic's 2/7 and 3/3 never equal the reader's 7/2 (0 of 2).
    assert permutation_chance(records) == (4, 0.5, None)


def test_a_verdict_quoting_the_question_recites_and_does_not_echo() -> None:
    """Eight words in a row of the question are the item's text: recitation, not an echo of
    the instructions (and not copying: the other referee never said them)."""
    quoting = debate("r1", scores(7, 2), scores(7, 2), talk=f"The user asks: {QUESTION} I say A.")
    detector = EchoDetector(PANEL.prompts.instruction_texts())
    critic = debate_behaviour(quoting, PANEL, detector)["Critic"]
    assert (critic.utterances, critic.reciting, critic.echoing) == (2, 1, 0)
    summary = run_diagnostics(records_of([quoting]))["parroting"]
    assert summary is not None
    assert (summary["reciting"], summary["utterances"], summary["recitation_share"]) == (1, 4, 0.25)
    assert summary["echoing"] == 0


def test_recitation_of_most_utterances_is_named() -> None:
    parroting = run_diagnostics(records_of([debate("r2", scores(7, 2), scores(3, 8))]))["parroting"]
    assert parroting is not None
    many = parroting | {"reciting": 3, "recitation_share": 0.75}
    assert degenerate_reasons({"parroting": many}) == ["75% of referee utterances recite the item's text"]


def test_metrics_json_has_the_new_keys() -> None:
    metrics = compute_metrics(statistics_settings(CONFIG), TOP)
    assert metrics["ceiling"] == run_diagnostics(TOP, SCALES)["ceiling"]
    empty = metrics["empty_assessments"]
    assert empty is not None and (empty["empty"], empty["verdicts_empty"]) == (0, 0)
    per_model = metrics["per_model"][PANEL.agents[0].model]
    ceiling = per_model.get("ceiling")
    assert ceiling is not None and ceiling["top_share"] == 1.0
    parroting = metrics["parroting"]
    assert parroting is not None and parroting["copy_permutation_chance"] == 1.0
