"""An assessment cannot begin with its scores: the constraint of the assessment request, read by
Python's regular expressions and by the index outlines-core builds for the engines."""

import re

import pytest

from chateval.judging.assessment import explanation
from chateval.judging.formats import Dimension, DirectFormat, PairwiseFormat
from tests.support.helpers import MODELS_DIR

PAIRWISE = PairwiseFormat()
DIRECT = DirectFormat(
    [Dimension("naturalness", "reads as a person would write"), Dimension("coherence", "fits")]
)

EXPLANATIONS = [
    "Evaluation evidence: Assistant 1 is more detailed.\nAssistant 1: 8\nAssistant 2: 5",
    "Both answers are fine.",
    "Assistant 1 gives more detail than Assistant 2.",
    "Evaluation evidence: both are vague",
    "Evaluation evidence:Both",
    '"Quoted" words first',
    "The answer of Assistant 2 is wrong.",
    "Scarcely any difference.",
    " The answers differ.",  # one space: the reply continues a lead such as "Critic:"
]
SCORES_FIRST = [
    "Assistant 1: 8\nAssistant 2: 5",
    "assistant 1 : 3",
    "Scores:\nAssistant 1: 7",
    "Score: 7",
    "Evaluation evidence:\nAssistant 1: 10",
    "Evaluation evidence: Assistant 1: 10",
    "Evaluation evidence: Scores: 7",
    "Evaluation evidence: Evaluation evidence: x",
    "Evaluation evidence:  two spaces",
    "**Assistant 1:** 7",
    "  Both",
    "\nBoth",
    "Evaluation evidence\nAssistant 1: 8",
    "1. Both",
    "",
    "Ass",  # a text may not stop inside a forbidden prefix
]


@pytest.mark.parametrize("text", EXPLANATIONS)
def test_an_explanation_may_start_the_assessment(text: str) -> None:
    assert re.fullmatch(PAIRWISE.assessment_regex, text)


@pytest.mark.parametrize("text", SCORES_FIRST)
def test_scores_cannot_start_the_assessment(text: str) -> None:
    assert not re.fullmatch(PAIRWISE.assessment_regex, text)


def test_direct_scoring_refuses_a_first_dimension_line() -> None:
    assert not re.fullmatch(DIRECT.assessment_regex, "Naturalness: 3\nCoherence: 4")
    assert not re.fullmatch(DIRECT.assessment_regex, "naturalness : 4")
    assert re.fullmatch(DIRECT.assessment_regex, "Natural enough, and it follows the last turn.")


def test_a_score_first_answer_leaves_an_empty_assessment() -> None:
    """What a backend without constraints (a scripted one) may still return: counted as empty."""
    assert PAIRWISE.assessment("Assistant 1: 8\nAssistant 2: 5") == ""
    assert PAIRWISE.assessment("Evaluation evidence:\nAssistant 1: 8\nAssistant 2: 5") == ""
    kept = PAIRWISE.assessment("Evaluation evidence: the first is right.\nAssistant 1: 8\nAssistant 2: 5")
    assert kept == "Evaluation evidence: the first is right."
    assert explanation(kept) == "the first is right."


@pytest.mark.parametrize("text", EXPLANATIONS)
def test_what_the_constraint_lets_through_is_never_cut_to_nothing(text: str) -> None:
    assert PAIRWISE.assessment(text + "\nAssistant 1: 8\nAssistant 2: 5")


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_the_engine_index_follows_the_same_rule() -> None:
    """outlines-core (the engines' constraint) walks the default model's tokens through it."""
    folder = MODELS_DIR / "smollm2-135m"
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the default model is not prepared (scripts/setup.sh)")
    from outlines.backends.outlines_core import OutlinesCoreBackend
    from outlines.models.transformers import TransformerTokenizer
    from outlines_core import Index
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    adapter = TransformerTokenizer(tokenizer)
    vocabulary = OutlinesCoreBackend.create_outlines_core_vocabulary(
        adapter.vocabulary, adapter.eos_token_id, adapter.eos_token, adapter.convert_token_to_string
    )
    index = Index(PAIRWISE.assessment_regex, vocabulary)

    def walks(text: str) -> bool:
        state: int | None = index.get_initial_state()
        for token in tokenizer.encode(text):
            if state is None:
                return False
            state = index.get_next_state(state, token)
        return state is not None

    for text in ["Evaluation evidence: Both are fine", "Assistant 1 is better", "The answer is"]:
        assert walks(text), text
    for text in ["Assistant 1: 8", "Scores:", "Evaluation evidence:\nAssistant", "Score of"]:
        assert not walks(text), text
