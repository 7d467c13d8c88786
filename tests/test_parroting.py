"""Echo and copy diagnostics on hand-built debates: a parroting panel and an independent one."""

from pathlib import Path

from chateval.data.items import PairwiseItem
from chateval.debate.building import build_panel
from chateval.debate.panel import Debate
from chateval.diagnostics import per_model
from chateval.parroting import EchoDetector, debate_behaviour, parroting_summary, word_runs
from chateval.records import item_records
from chateval.transcript import Transcript, Turn, Utterance
from tests.conftest import tiny_config

ITEM = PairwiseItem("q1", "How long should I boil an egg?", "Nine minutes.", "Until it is done.", "A")


def debate(*said: tuple[Turn, str, str, str]) -> Debate:
    return Debate("q1", ITEM, transcript=Transcript(tuple(Utterance(t, s, k, x) for t, s, k, x in said)))  # type: ignore[arg-type]


PANEL = build_panel(tiny_config())  # one_by_one, Critic then Everyday Reader, 2 rounds
DETECTOR = EchoDetector(PANEL.prompts.instruction_texts())
LAST = PANEL.rounds - 1

PARROTING = debate(
    (
        Turn(0, 0),
        "Critic",
        "discussion",
        "[Your turn: Critic] You are Critic. You look for weaknesses first: factual slips, gaps",
    ),
    (Turn(0, 1), "Everyday Reader", "discussion", "Tell the panel what you think in two or three sentences."),
    (Turn(LAST, 0, "verdict"), "Critic", "assessment", "I agree with the panel."),
    (Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", "Assistant 1: 7\nAssistant 2: 7"),
    (
        Turn(LAST, 1, "verdict"),
        "Everyday Reader",
        "assessment",
        "Judge the answers of two AI assistants to the user question below.",
    ),
    (Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", "Assistant 1: 7\nAssistant 2: 7"),
)
INDEPENDENT = debate(
    (Turn(0, 0), "Critic", "discussion", "Nine minutes gives a hard yolk; the second answer says nothing."),
    (
        Turn(0, 1),
        "Everyday Reader",
        "discussion",
        "I just want a time I can set on my phone, so the first helps.",
    ),
    (Turn(LAST, 0, "verdict"), "Critic", "assessment", "The first answer is precise."),
    (Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", "Assistant 1: 8\nAssistant 2: 2"),
    (
        Turn(LAST, 1, "verdict"),
        "Everyday Reader",
        "assessment",
        "The first answer is usable; I would add a tip on cooling.",
    ),
    (Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", "Assistant 1: 7\nAssistant 2: 3"),
)


def test_word_runs_ignore_case_and_punctuation() -> None:
    assert word_runs("One, two; THREE four", 4) == {("one", "two", "three", "four")}
    assert word_runs("too short", 4) == set()


def test_a_parroting_panel_is_flagged() -> None:
    behaviour = debate_behaviour(PARROTING, PANEL, DETECTOR)
    # Critic's talk repeats its persona; its assessment is its own words. The reader repeats the
    # talk instruction and the task's framing.
    assert behaviour["Critic"].as_dict() == {
        "utterances": 2,
        "echoing": 1,
        "saw_verdict": False,
        "copied_from": None,
    }
    assert behaviour["Everyday Reader"].as_dict() == {
        "utterances": 2,
        "echoing": 2,
        "saw_verdict": True,
        "copied_from": "Critic",
    }


def test_an_independent_panel_is_not_flagged() -> None:
    behaviour = debate_behaviour(INDEPENDENT, PANEL, DETECTOR)
    assert [b.echoing for b in behaviour.values()] == [0, 0]
    assert behaviour["Everyday Reader"].saw_verdict and behaviour["Everyday Reader"].copied_from is None


def test_simultaneous_verdicts_cannot_copy() -> None:
    """Referees who score at the same time never saw each other's verdict: equal is not copied."""
    panel = build_panel(tiny_config(strategy="simultaneous"))
    behaviour = debate_behaviour(PARROTING, panel, EchoDetector(panel.prompts.instruction_texts()))
    assert not any(b.saw_verdict or b.copied_from for b in behaviour.values())


def test_shares_per_model_from_verdict_records(tmp_path: Path) -> None:
    records = item_records([PARROTING], PANEL) + [
        {**r, "item_id": "q2"} for r in item_records([INDEPENDENT], PANEL)
    ]
    summary = per_model("pairwise", records, {"Critic": "m", "Everyday Reader": "m"}, seed=0)["m"][
        "parroting"
    ]
    assert summary == {
        "utterances": 8,
        "echoing": 3,
        "echo_share": 3 / 8,
        "verdicts_that_saw_one": 2,
        "copied": 1,
        "copy_share": 0.5,
    }
    assert parroting_summary([])["echo_share"] is None
