"""Verdict formats: the regex admits what the parser reads, and max_tokens covers the scores."""

import re

import pytest

from chateval.errors import ConfigError, VerdictError
from chateval.judging.assessment import scoring_lead, verdict_text
from chateval.judging.formats import Dimension, DirectFormat, PairwiseFormat, _scale_regex


def test_scale_regex_matches_exactly_the_range() -> None:
    pattern = re.compile(_scale_regex(1, 10))
    assert [v for v in range(0, 12) if pattern.fullmatch(str(v))] == list(range(1, 11))
    assert re.fullmatch(_scale_regex(0, 1), "0")


def test_pairwise_regex_and_parse_agree() -> None:
    fmt = PairwiseFormat(reasoning=False)
    text = "Assistant 1: 10\nAssistant 2: 4\nEvidence: first is thorough; second is vague"
    assert re.fullmatch(fmt.regex, text)
    verdict = fmt.parse(text)
    assert (verdict.score_1, verdict.score_2, verdict.winner_shown) == (10, 4, "1")
    assert not re.fullmatch(fmt.regex, "Assistant 1: 11\nAssistant 2: 4\nEvidence: x")
    assert not re.fullmatch(fmt.regex, "Assistant 1: 5\nAssistant 2: 4\nEvidence: two\nlines")


def test_reasoned_pairwise_scores_continue_the_assessment() -> None:
    """With reasoning the constrained part is only the score lines, after ``Scores:``."""
    fmt = PairwiseFormat()
    assert fmt.reasoning and "First explain your evaluation" in fmt.instruction
    assert fmt.form.startswith("Evaluation evidence: <your explanation>\nAssistant 1:")
    assert "Evidence" not in fmt.regex
    completion = "\nAssistant 1: 10\nAssistant 2: 4"
    assert re.fullmatch(fmt.regex, completion)
    assert not re.fullmatch(fmt.regex, completion + "\nEvidence: x")
    verdict = fmt.parse(completion.strip())
    assert (verdict.score_1, verdict.score_2, verdict.evidence) == (10, 4, "")
    assert scoring_lead("Both answer; the first is exact.") == "Both answer; the first is exact.\n\nScores:"
    assert scoring_lead("") == "Scores:"  # never an empty lead to continue
    assert verdict_text("Fine.", "Assistant 1: 3\nAssistant 2: 4") == (
        "Fine.\n\nScores:\nAssistant 1: 3\nAssistant 2: 4"
    )


def test_pairwise_parse_accepts_evidence_cut_by_the_token_budget() -> None:
    assert PairwiseFormat().parse("Assistant 1: 3\nAssistant 2: 3\nEvidence: the sec").winner_shown == "tie"
    assert PairwiseFormat().parse("Assistant 1: 3\nAssistant 2: 8").evidence == ""


@pytest.mark.parametrize(
    "bad", ["", "Assistant 1: 3", "I think 1 is better", "Assistant 1: 0\nAssistant 2: 4"]
)
def test_pairwise_parse_failures_raise(bad: str) -> None:
    with pytest.raises(VerdictError):
        PairwiseFormat().parse(bad)


@pytest.mark.parametrize("reasoning", [True, False])
def test_max_tokens_cover_the_longest_score_block(reasoning: bool) -> None:
    # Every constrained token adds at least one character, so characters bound tokens.
    fmt = PairwiseFormat(evidence_max_tokens=5, reasoning=reasoning)
    dims = [Dimension("naturalness", "", 1, 3), Dimension("groundedness", "", 0, 1)]
    direct = DirectFormat(dims, evidence_max_tokens=5, reasoning=reasoning)
    if reasoning:
        assert fmt.max_tokens > len("\nAssistant 1: 10\nAssistant 2: 10")
        assert direct.max_tokens > len("\nNaturalness: 3\nGroundedness: 1")
    else:
        assert fmt.max_tokens >= len("Assistant 1: 10\nAssistant 2: 10\nEvidence: ") + 5
        assert direct.max_tokens >= len("Naturalness: 3\nGroundedness: 1\nEvidence: ") + 5


@pytest.mark.parametrize("reasoning", [True, False])
def test_direct_regex_and_parse(reasoning: bool) -> None:
    dims = [Dimension("naturalness", "d", 1, 3), Dimension("groundedness", "d", 0, 1)]
    fmt = DirectFormat(dims, reasoning=reasoning)
    text = (
        "\nNaturalness: 2\nGroundedness: 0"
        if reasoning
        else "Naturalness: 2\nGroundedness: 0\nEvidence: uses no fact"
    )
    assert re.fullmatch(fmt.regex, text)
    assert fmt.parse(text.strip()).scores == {"naturalness": 2, "groundedness": 0}
    with pytest.raises(VerdictError, match="groundedness"):
        fmt.parse("Naturalness: 2\nEvidence: x")
    with pytest.raises(VerdictError, match="outside"):
        fmt.parse("Naturalness: 2\nGroundedness: 3\nEvidence: x")


def test_invalid_formats_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        PairwiseFormat(low=5, high=5)
    with pytest.raises(ConfigError):
        DirectFormat([])
    with pytest.raises(ConfigError):
        DirectFormat([Dimension("a b", "x")])


def test_an_assessment_stops_where_its_writer_starts_the_scores() -> None:
    """The constrained request writes the scores, so free-text scores are cut off first."""
    fmt = PairwiseFormat()
    assert (
        fmt.assessment("Answer 1 is exact.\nScores:\nAssistant 1: 9\nAssistant 2: 2") == "Answer 1 is exact."
    )
    assert fmt.assessment("Answer 1 is exact.\n\n**Assistant 1: 9**") == "Answer 1 is exact."
    assert fmt.assessment("Assistant 1: gives the exact time.\nAssistant 2: hedges.") == (
        "Assistant 1: gives the exact time.\nAssistant 2: hedges."
    )  # prose about an assistant, no score: kept
    assert fmt.assessment("Scores: 9 and 2") == ""
    dims = [Dimension("naturalness", "d", 1, 3), Dimension("groundedness", "d", 0, 1)]
    assert DirectFormat(dims).assessment("Reads well.\nNaturalness: 3\nGroundedness: 1") == "Reads well."


def test_half_points_are_the_2023_parse_as_a_setting() -> None:
    """``half_points``: the constraint and the parser admit 7.5 (not 10.5, not 7.25); the
    default whole-point format refuses a half, and its budget covers the widest score."""
    half = PairwiseFormat(half_points=True)
    assert re.fullmatch(half.regex, "\nAssistant 1: 7.5\nAssistant 2: 10")
    assert not re.fullmatch(half.regex, "\nAssistant 1: 10.5\nAssistant 2: 9")
    assert not re.fullmatch(half.regex, "\nAssistant 1: 7.25\nAssistant 2: 9")
    verdict = half.parse("Assistant 1: 7.5\nAssistant 2: 7")
    assert (verdict.score_1, verdict.score_2, verdict.winner_shown) == (7.5, 7, "1")
    assert isinstance(verdict.score_2, int)  # whole points stay integers in the records
    assert half.max_tokens > len("\nAssistant 1: 9.5\nAssistant 2: 9.5")
    assert not re.fullmatch(PairwiseFormat().regex, "\nAssistant 1: 7.5\nAssistant 2: 7")
    with pytest.raises(VerdictError, match="half point"):
        PairwiseFormat().parse("Assistant 1: 7.5\nAssistant 2: 7")
    direct = DirectFormat([Dimension("coherence", "d", 1, 3)], half_points=True)
    assert re.fullmatch(direct.regex, "\nCoherence: 2.5") and not re.fullmatch(
        direct.regex, "\nCoherence: 3.5"
    )
    assert direct.parse("Coherence: 2.5").scores == {"coherence": 2.5}


def test_half_points_need_hard_verdicts() -> None:
    from tests.support.helpers import tiny_config

    with pytest.raises(ConfigError, match="half_points needs soft: false"):
        tiny_config(verdict={"half_points": True})
    assert tiny_config(verdict={"half_points": True, "soft": False}).verdict.half_points
