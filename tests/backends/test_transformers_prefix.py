"""The transformers backend's KV reuse: a batch's common prompt prefix is computed once and
copied into every row, and a conversation's next request starts from its kept prompt and answer.
With greedy decoding it must not change any output, also when rows differ in length by far
(padding between the reused part and a row's own tokens) and reuse different lengths.

Gemma 3 (sliding-window layers) does not reuse: its window would count the padding.
"""

import pytest

from chateval.backends.transformers_backend import (
    MIN_SHARED_PREFIX,
    full_attention_only,
    shared_prefix_length,
)
from chateval.core.backend import Backend, ChatMessage, GenerationRequest
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from tests.support.helpers import tiny_config

RULES = " ".join(
    f"Rule {n}: a referee reads both answers in full, weighs accuracy before style, and says "
    "which claims it checked."
    for n in range(1, 31)
)
QUESTIONS = [
    "What makes a good night's sleep?",
    "Why do leaves change colour in autumn? Answer for a child.",
    "Is it better to rent or to buy a flat in a big city?",
    "How does a bicycle stay upright when it moves?",
    # Much longer than the others: they get over 100 pads between the prefix and their tokens.
    "Here is some background. "
    + " ".join(f"Fact {n}: bicycles were once called velocipedes." for n in range(12)),
]


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_reuse_only_for_full_attention_models() -> None:
    from transformers import Gemma3TextConfig, LlamaConfig

    assert not full_attention_only(Gemma3TextConfig())
    assert full_attention_only(LlamaConfig())
    hybrid = LlamaConfig(num_hidden_layers=2, layer_types=["full_attention", "linear_attention"])
    assert not full_attention_only(hybrid)


def test_shared_prefix_length() -> None:
    assert shared_prefix_length([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 9]]) == 2
    assert shared_prefix_length([[7, 8, 9], [7, 8, 9, 10]]) == 2  # one own token left per row
    assert shared_prefix_length([[1, 2], [3, 4]]) == 0
    assert shared_prefix_length([[5, 6, 7]]) == 2


def requests(model: str, questions: list[str], regex: str | None = None) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            model=model,
            messages=(
                ChatMessage("system", "You are a careful referee on a panel."),
                ChatMessage("user", f"{RULES}\n\n[Task]\n{question}\n\nGive your view in two sentences."),
            ),
            max_tokens=12,
            regex=regex,
        )
        for question in questions
    ]


def generate(backend: Backend, batch: list[GenerationRequest], prefix_cache: bool) -> list[str]:
    before = backend.prefix_cache  # type: ignore[attr-defined]
    backend.prefix_cache = prefix_cache  # type: ignore[attr-defined]
    try:
        results = backend.generate(batch)
    finally:
        backend.prefix_cache = before  # type: ignore[attr-defined]
    if prefix_cache:  # every row but a batch's first reuses (the first may compute the prefix)
        assert all(r.cached_prompt_tokens >= MIN_SHARED_PREFIX for r in results[1:])
    else:
        assert all(r.cached_prompt_tokens == 0 for r in results)
    return [r.text for r in results]


@pytest.mark.slow
def test_prefix_reuse_keeps_greedy_outputs(transformers_backend: Backend) -> None:
    backend = transformers_backend
    free = requests(DEFAULT_MODEL, QUESTIONS)
    lengths = [backend.count_prompt_tokens(r.messages) for r in free]
    assert max(lengths) - min(lengths) > 100
    assert generate(backend, free, True) == generate(backend, free, False)
    # Constrained decoding (the verdict path) and a batch of its own: same answers either way.
    verdicts = requests(DEFAULT_MODEL, QUESTIONS[:2], regex=r"Verdict: (Agree|Disagree)")
    assert generate(backend, verdicts, True) == generate(backend, verdicts, False)


@pytest.mark.slow
def test_sliding_window_model_does_not_reuse(registry: ModelRegistry, second_model: str) -> None:
    from chateval.engines.factory import Engines

    backend = Engines(tiny_config(backend="transformers"), registry).load(second_model)
    try:
        assert backend.prefix_cache is False  # type: ignore[attr-defined]
        results = backend.generate(requests(second_model, QUESTIONS[:2]))
        assert [r.cached_prompt_tokens for r in results] == [0, 0]
    finally:
        backend.close()


def next_turn(request: GenerationRequest, answer: str, follow_up: str) -> GenerationRequest:
    """The request's conversation, continued: its answer, then a new user message."""
    messages = (*request.messages, ChatMessage("assistant", answer), ChatMessage("user", follow_up))
    return GenerationRequest(model=request.model, messages=messages, max_tokens=request.max_tokens)


@pytest.mark.slow
def test_next_turn_reuses_the_previous_prompt_and_answer(transformers_backend: Backend) -> None:
    """A conversation's next request starts from its kept prompt and answer (rows of a batch
    reuse different lengths, a fresh row only the common prefix), with the same answers."""
    backend: Backend = transformers_backend
    backend.reset_cache()  # type: ignore[attr-defined]
    first = requests(DEFAULT_MODEL, QUESTIONS[:2])
    answers = backend.generate(first)
    follow_ups = ["Now say it in five words.", "Which word matters most here, and why?"]
    second = [next_turn(r, a.text, f) for r, a, f in zip(first, answers, follow_ups, strict=True)]
    second += requests(DEFAULT_MODEL, QUESTIONS[2:3])  # nothing kept but the rules
    with_reuse = backend.generate(second)
    for result, earlier in zip(with_reuse[:2], answers, strict=True):
        assert result.cached_prompt_tokens >= earlier.prompt_tokens + len(earlier.text.split()) // 2
    assert MIN_SHARED_PREFIX <= with_reuse[2].cached_prompt_tokens < answers[0].prompt_tokens
    assert [r.text for r in with_reuse] == generate(backend, second, False)
    # One request alone (ChatEval's sequential loop) reuses its conversation's kept tokens too.
    (alone,) = backend.generate([next_turn(second[0], with_reuse[0].text, "Thanks. One more word?")])
    assert alone.cached_prompt_tokens >= with_reuse[0].prompt_tokens
