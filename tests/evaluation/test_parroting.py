"""Echo, copy and cut-off diagnostics on hand-built debates: a parroting panel and an independent one,
the chance baselines against hand-computed values, cut-off turns."""

import re
from pathlib import Path
from typing import Any

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.core.items import PairwiseItem
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.debate.behaviour import EchoDetector, debate_behaviour, word_runs
from chateval.debate.building import build_panel
from chateval.debate.panel import Panel
from chateval.evaluation.diagnostics.model_rows import PER_MODEL_COLUMNS, per_model_rows
from chateval.evaluation.diagnostics.parroting import (
    NO_BLIND_VERDICTS,
    NO_BLIND_WORDS,
    NOT_RECORDED,
    parroting_summary,
)
from chateval.evaluation.diagnostics.summary import per_model
from chateval.evaluation.diagnostics.text import (
    cut_off_kinds,
    cut_off_text,
    degenerate_reasons,
    words_copy_text,
)
from chateval.run.records import item_records
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, run_diagnostics, tiny_config

ITEM = PairwiseItem("q1", "How long should I boil an egg?", "Nine minutes.", "Until it is done.", "A")


def debate(*said: tuple[Turn, str, str, str]) -> Debate:
    return Debate("q1", ITEM, transcript=Transcript(tuple(Utterance(t, s, k, x) for t, s, k, x in said)))  # type: ignore[arg-type]


# one_by_one, Critic then Everyday Reader, 2 rounds; the echoes below repeat the instructions of
# the conversation layout.
PANEL = build_panel(tiny_config(prompt_layout="conversation"))
DETECTOR = EchoDetector(PANEL.prompts.instruction_texts())
LAST = PANEL.rounds - 1

PARROTING = debate(
    (
        Turn(0, 0),
        "Critic",
        "discussion",
        "[Your turn: Critic] You are Critic. You care about writing: whether it flows, whether",
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
    assert (
        behaviour["Critic"].as_dict().items()
        >= {
            "utterances": 2,
            "echoing": 1,
            "saw_verdict": False,
            "copied_from": None,
        }.items()
    )
    assert (
        behaviour["Everyday Reader"].as_dict().items()
        >= {
            "utterances": 2,
            "echoing": 2,
            "saw_verdict": True,
            "copied_from": "Critic",
        }.items()
    )


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
        # Every utterance but the critic's opening saw the other referee's words; none repeats them.
        "utterances_that_saw_words": 6,
        "copied_words": 0,
        "words_copy_share": 0.0,
        "blind_words": 0,
        "blind_words_shared": 0,
        "words_copy_chance": None,
        "words_copy_chance_reason": NO_BLIND_WORDS,
        "blind_verdicts": 0,
        "blind_verdicts_equal": 0,
        "copy_chance": None,
        "copy_chance_reason": NO_BLIND_VERDICTS,
        # Added since: nobody recites the item; the reader's 7/7 on q1 against the critic's 8/2
        # on q2 (and back): no verdict equals the seen referee's on the other item.
        "reciting": 0,
        "recitation_share": 0.0,
        "recitation_reason": None,
        "copy_permutation_verdicts": 2,
        "copy_permutation_chance": 0.0,
        "copy_permutation_chance_reason": None,
    }
    assert parroting_summary([])["echo_share"] is None


# --- copied words, chance baselines, cut-off turns ---------------------------------------

ANSWER_RUN = "nine minutes gives a hard yolk while the other answer gives no time"
FIRST_TAKE = "Nine minutes gives a hard yolk while the other answer gives no time at all, so A wins."


def said(turn: Turn, speaker: str, kind: str, text: str, finish: str = "stop") -> Utterance:
    return Utterance(turn, speaker, kind, text, finish)  # type: ignore[arg-type]


def debate_of(item_id: str, *utterances: Utterance) -> Debate:
    return Debate(
        item_id,
        PairwiseItem(item_id, ITEM.question, ITEM.answer_a, ITEM.answer_b, "A"),
        transcript=Transcript(utterances),
    )


SCORES_7_3 = "Assistant 1: 7\nAssistant 2: 3"
# One-by-one: the reader repeats the critic word for word, in its talk and in its assessment.
COPYING = debate_of(
    "c1",
    said(Turn(0, 0), "Critic", "discussion", FIRST_TAKE),
    said(Turn(0, 1), "Everyday Reader", "discussion", FIRST_TAKE),
    said(
        Turn(LAST, 0, "verdict"),
        "Critic",
        "assessment",
        "The first answer is precise and the second one is vague about time.",
    ),
    said(Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", SCORES_7_3),
    said(
        Turn(LAST, 1, "verdict"),
        "Everyday Reader",
        "assessment",
        "The first answer is precise and the second one is vague about time.",
    ),
    said(Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", SCORES_7_3),
)


def parroting_of(debates: list[Debate], panel: Panel = PANEL) -> dict[str, Any]:
    """The run-level parroting diagnostics of hand-built ``debates``."""
    summary = run_diagnostics([r for d in debates for r in item_records([d], panel)])["parroting"]
    assert summary is not None
    return summary


def test_a_panel_copying_words_is_flagged_and_an_independent_one_is_not() -> None:
    copying = debate_behaviour(COPYING, PANEL, DETECTOR)
    # The critic's opening saw nobody; its assessment saw the reader's talk, in other words.
    assert (copying["Critic"].saw_words, copying["Critic"].copied_words) == (1, 0)
    assert (copying["Everyday Reader"].saw_words, copying["Everyday Reader"].copied_words) == (2, 2)
    copied = parroting_of([COPYING])
    assert (copied["utterances_that_saw_words"], copied["copied_words"]) == (3, 2)
    assert copied["words_copy_share"] == 2 / 3
    [reason] = degenerate_reasons({"parroting": copied})
    assert reason.startswith(
        "67% of referee utterances copy another referee's words (no chance rate to compare: "
    )

    independent = parroting_of([INDEPENDENT])
    assert (independent["utterances_that_saw_words"], independent["copied_words"]) == (3, 0)
    assert independent["words_copy_share"] == 0.0
    assert degenerate_reasons({"parroting": independent}) == []


def test_quoting_the_item_is_not_copying_another_referee() -> None:
    """Both referees restate the question and an answer word for word (as a small model that
    rewrites its prompt does): those runs are the item's, shown to everyone, not copied."""
    restated = f"[Question] {ITEM.question} [Assistant 1's answer] {ITEM.answer_a}"
    quoting = debate_of(
        "q1",
        said(Turn(0, 0), "Critic", "discussion", restated + " The critic thinks A is exact."),
        said(Turn(0, 1), "Everyday Reader", "discussion", restated + " I would go with the second."),
    )
    behaviour = debate_behaviour(quoting, PANEL, DETECTOR)
    assert (behaviour["Everyday Reader"].saw_words, behaviour["Everyday Reader"].copied_words) == (1, 0)
    # The same reply with 8 words of the critic's own beyond the item's is copying.
    copying = debate_of(
        "q1",
        said(Turn(0, 0), "Critic", "discussion", "The critic thinks the first answer is exact and short."),
        said(
            Turn(0, 1),
            "Everyday Reader",
            "discussion",
            "the critic thinks the first answer is exact and short",
        ),
    )
    assert debate_behaviour(copying, PANEL, DETECTOR)["Everyday Reader"].copied_words == 1


def test_one_by_one_without_probes_has_no_chance_baseline() -> None:
    """Only the first referee's opening is blind: nothing to pair it with, so no baseline (not 0)."""
    summary = parroting_of([COPYING])
    assert summary["blind_words"] == 0 and summary["words_copy_chance"] is None
    assert summary["words_copy_chance_reason"] == NO_BLIND_WORDS
    assert summary["blind_verdicts"] == 0 and summary["copy_chance"] is None
    assert summary["copy_chance_reason"] == NO_BLIND_VERDICTS
    assert (
        "(no chance rate to compare: no two referees spoke before seeing another's words)"
        in words_copy_text(summary)
    )


SIMULTANEOUS = build_panel(tiny_config(strategy="simultaneous", opinion_probes=True))


def probed(item_id: str, reader_probe: str) -> Debate:
    """Simultaneous talk with opinion probes. Blind (round 0, and round-0 probes): the two
    openings, which quote the same run of the answers, and the probes' assessments, which
    share nothing. Round 1 saw round 0: the reader's assessment repeats the critic's opening."""
    return debate_of(
        item_id,
        said(Turn(0, 0), "Critic", "discussion", FIRST_TAKE),
        said(Turn(0, 1), "Everyday Reader", "discussion", f"I would say {ANSWER_RUN}, which helps nobody."),
        said(
            Turn(LAST, 0, "verdict"),
            "Critic",
            "assessment",
            "Having heard the reader, I still find the first precise.",
        ),
        said(Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", SCORES_7_3),
        said(Turn(LAST, 1, "verdict"), "Everyday Reader", "assessment", FIRST_TAKE),
        said(Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", SCORES_7_3),
        said(Turn(0, 0, "probe"), "Critic", "assessment", "Before any talk: the first answer names a time."),
        said(Turn(0, 0, "probe", scoring=True), "Critic", "probe", SCORES_7_3),
        said(
            Turn(0, 1, "probe"),
            "Everyday Reader",
            "assessment",
            "Before any talk I prefer something I can set.",
        ),
        said(Turn(0, 1, "probe", scoring=True), "Everyday Reader", "probe", reader_probe),
        # Round-1 probes saw round 0: not blind, and never counted as talk.
        said(Turn(1, 0, "probe"), "Critic", "assessment", FIRST_TAKE),
        said(Turn(1, 0, "probe", scoring=True), "Critic", "probe", SCORES_7_3),
        said(Turn(1, 1, "probe"), "Everyday Reader", "assessment", FIRST_TAKE),
        said(Turn(1, 1, "probe", scoring=True), "Everyday Reader", "probe", SCORES_7_3),
    )


def test_chance_baselines_against_hand_computed_values() -> None:
    """Per debate each referee has two blind utterances (opening, round-0 probe's assessment):
    the openings share a run, the probes share none with anything, so 2 of 4 agree by chance.
    The round-0 probe scores agree in the first debate and not in the second: 2 of 4 blind
    verdicts equal another referee's. Round 1: the reader copies (1 of 1), the critic does not."""
    equal, different = probed("p1", SCORES_7_3), probed("p2", "Assistant 1: 2\nAssistant 2: 9")
    behaviour = debate_behaviour(equal, SIMULTANEOUS, EchoDetector(SIMULTANEOUS.prompts.instruction_texts()))
    critic, reader = behaviour["Critic"], behaviour["Everyday Reader"]
    assert (critic.blind_words, critic.blind_words_shared) == (2, 1)
    assert (reader.blind_words, reader.blind_words_shared) == (2, 1)
    assert (critic.blind_verdicts, critic.blind_verdicts_equal) == (1, 1)
    assert (critic.saw_words, critic.copied_words, reader.saw_words, reader.copied_words) == (1, 0, 1, 1)
    assert not critic.saw_verdict  # simultaneous verdicts: no copy of scores possible

    summary = parroting_of([equal, different], SIMULTANEOUS)
    assert (summary["blind_words"], summary["blind_words_shared"]) == (8, 4)
    assert summary["words_copy_chance"] == 0.5 and summary["words_copy_chance_reason"] is None
    assert (summary["blind_verdicts"], summary["blind_verdicts_equal"]) == (4, 2)
    assert summary["copy_chance"] == 0.5 and summary["copy_chance_reason"] is None
    assert (summary["utterances_that_saw_words"], summary["copied_words"]) == (4, 2)
    assert summary["words_copy_share"] == 0.5
    assert words_copy_text(summary) == "50.0% of 4 utterances (chance 50.0% of 8)"


SUMMARIZED = build_panel(tiny_config(strategy="simultaneous_summarizer"))


def test_words_passed_on_by_a_summary_count_and_the_summary_cut_off_is_the_summarizers() -> None:
    """The critic's summary quotes the reader's run: the critic who repeats it copied the reader.
    The reader, who saw the critic's words but not the critic's summary, repeats that summary's
    own words: it copied nobody."""
    summary_text = f"The reader said {ANSWER_RUN}. Both agree that timing matters for every egg."
    debate = debate_of(
        "s1",
        said(Turn(0, 0), "Critic", "discussion", "The first answer names a time; the second is empty."),
        said(Turn(0, 1), "Everyday Reader", "discussion", f"Honestly {ANSWER_RUN}."),
        said(Turn(0, 0, "summary"), "Summarizer", "summary", summary_text, "length"),
        said(Turn(LAST, 0, "verdict"), "Critic", "assessment", f"As was said, {ANSWER_RUN}."),
        said(Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", SCORES_7_3),
        said(
            Turn(LAST, 1, "verdict"),
            "Everyday Reader",
            "assessment",
            "Both agree that timing matters for every egg, yes.",
        ),
        said(Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", SCORES_7_3),
    )
    behaviour = debate_behaviour(debate, SUMMARIZED, EchoDetector(SUMMARIZED.prompts.instruction_texts()))
    assert (behaviour["Critic"].saw_words, behaviour["Critic"].copied_words) == (1, 1)
    assert (behaviour["Everyday Reader"].saw_words, behaviour["Everyday Reader"].copied_words) == (1, 0)

    [record] = item_records([debate], SUMMARIZED)
    assert record["cut_off"] == {"summaries": 1, "summaries_cut": 1}
    models = per_model("pairwise", [record], {"Critic": "m", "Everyday Reader": "m"}, seed=0, summarizer="s")
    assert models["s"]["referees"] == [] and models["s"]["cut_off"]["summary"] == {
        "utterances": 1,
        "cut": 1,
        "share": 1.0,
    }
    assert models["m"]["cut_off"]["summary"] == {"utterances": 0, "cut": 0, "share": None}


def test_a_cut_off_assessment_is_counted() -> None:
    """The critic's verdict assessment and the reader's round-0 probe assessment hit the cap: two
    cut-off assessments of four, one verdict of two resting on one."""
    debate = debate_of(
        "k1",
        said(Turn(0, 0), "Critic", "discussion", "Nine minutes is a clear answer."),
        said(Turn(0, 1), "Everyday Reader", "discussion", "I agree, it is usable."),
        said(
            Turn(LAST, 0, "verdict"),
            "Critic",
            "assessment",
            "The first answer is precise because it",
            "length",
        ),
        said(Turn(LAST, 0, "verdict", scoring=True), "Critic", "verdict", SCORES_7_3),
        said(Turn(LAST, 1, "verdict"), "Everyday Reader", "assessment", "The first answer is usable."),
        said(Turn(LAST, 1, "verdict", scoring=True), "Everyday Reader", "verdict", SCORES_7_3),
        said(Turn(0, 1, "probe"), "Everyday Reader", "assessment", "Before the talk I think that", "length"),
        said(Turn(0, 1, "probe", scoring=True), "Everyday Reader", "probe", SCORES_7_3),
    )
    [record] = item_records([debate], PANEL)
    rows = {row["agent"]: row["cut_off"] for order in record["orders"] for row in order["referees"]}
    assert rows["Critic"] == {
        "discussions": 1,
        "discussions_cut": 0,
        "assessments": 1,
        "assessments_cut": 1,
        "verdict_assessment_cut": True,
        "assessments_empty": 0,  # added since: empty assessments
        "verdict_assessment_empty": False,
    }
    assert rows["Everyday Reader"]["assessments_cut"] == 1
    assert rows["Everyday Reader"]["verdict_assessment_cut"] is False
    assert "cut_off" not in record  # no summaries
    cut_off = run_diagnostics([record])["cut_off"]
    assert cut_off == {
        "discussion": {"utterances": 2, "cut": 0, "share": 0.0},
        "summary": {"utterances": 0, "cut": 0, "share": None},
        "assessment": {"utterances": 3, "cut": 2, "share": 2 / 3},
        "verdicts_with_assessment": 2,
        "verdicts_cut_off": 1,
    }
    assert cut_off_kinds(cut_off) == "2/3 assessments, 0/2 discussions"
    assert cut_off_text(cut_off).endswith("; 1/2 verdicts rest on a cut-off assessment")
    assert degenerate_reasons({"cut_off": cut_off}) == ["67% of assessments stop at the token cap"]


def test_records_of_earlier_releases_render_as_unknown() -> None:
    """Rows without the copied words or cut-offs: None with a reason in metrics, "-" on screen."""
    old = {"utterances": 4, "echoing": 1, "saw_verdict": True, "copied_from": "Critic"}
    summary = parroting_summary([old])
    assert summary["copy_share"] == 1.0 and summary["words_copy_share"] is None
    assert summary["copy_chance"] is None and summary["copy_chance_reason"] == NOT_RECORDED
    metrics = {"per_model": {"m": {"referees": ["Critic"], "parroting": summary, "cut_off": None}}}
    [row] = per_model_rows(metrics["per_model"])
    columns = dict(zip(PER_MODEL_COLUMNS, row, strict=True))
    assert (
        columns["copies another referee's words it saw"] == "-" and columns["cut off at the token cap"] == "-"
    )
    # Whose verdict it saw is not recorded either: no permutation chance, no claim of copying.
    assert columns["equals a verdict it saw"] == (
        f"100.0% of 1 verdicts (no chance rate to compare: {NOT_RECORDED}; "
        f"no rate on another item to compare: {NOT_RECORDED})"
    )
    assert (
        columns["recites the item"]
        == columns["empty assessments"]
        == columns["scores at the scale's ends"]
        == "-"
    )
    assert cut_off_kinds(None) == "-"
    assert degenerate_reasons({}) == []


def test_the_summary_says_cut_offs_next_to_parse_failures_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scripted referees that all say the same sentence and always hit the token cap."""
    from chateval.reporting.summary import print_summary

    def same_words(request: GenerationRequest) -> str | GenerationResult:
        if asks_for_scores(request):
            return SCORES_7_3
        return GenerationResult("every referee says these very same nine words again", 10, 9, "length")

    agents = [{"role": "critic", "model": "m"}, {"role": "everyday_reader", "model": "m"}]
    result = run(tiny_config(agents=agents), tmp_path, backends={"m": ScriptedBackend("m", same_words)})
    assert result.metrics is not None
    # 2 items x 2 answer orders x 2 referees; every referee but the opening one saw the others.
    assert result.metrics["cut_off"]["assessment"] == {"utterances": 8, "cut": 8, "share": 1.0}
    assert result.metrics["parroting"]["words_copy_share"] == 1.0
    assert result.metrics["per_model"]["m"]["cut_off"]["verdicts_cut_off"] == 8
    print_summary(result)
    out = capsys.readouterr().out
    headline = (
        r"verdicts that failed to parse +│ +0 │\n"
        r"│ cut off at the token cap +│ +8/8 assessments, 8/8 discussions │"
    )
    assert re.search(headline, out)
    assert (
        "    copies another referee's words it saw: 100.0% of 12 utterances (no chance rate to compare: "
        in out
    )
    # Every verdict is 7/3: equal to the one seen, and as often to one on another item (said
    # since the permutation chance was added).
    assert (
        "warning: the panel looks degenerate: 100% of referee utterances copy another referee's words "
        "(no chance rate to compare: no two referees spoke before seeing another's words); verdicts equal "
        "to one seen "
        "100%, but a referee's verdict on another item matches as often (100%): collapse, not copying; "
        "100% of assessments stop at the token cap"
    ) in " ".join(out.split())

    # report.md's per-model table and the HTML report's settings say the same.
    from chateval.reporting.html_views import run_settings
    from chateval.reporting.markdown import write_report
    from chateval.run.finished import load_finished_run

    report = load_finished_run(tmp_path)
    table = write_report([tmp_path], tmp_path / "md").read_text()
    assert "| 8/8 assessments, 8/8 discussions; 8/8 verdicts rest on a cut-off assessment |" in table
    assert "Warning: the panel of test looks degenerate: 100% of referee utterances copy" in table
    settings = run_settings(report)
    assert settings["cut off at the token cap"].startswith("8/8 assessments, 8/8 discussions")
    assert settings["panel looks degenerate"].endswith("100% of assessments stop at the token cap")
