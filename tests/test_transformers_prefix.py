"""The transformers backend's prefix reuse: the KV cache of the prompt prefix a batch shares is
computed once and copied into every row. With greedy decoding it must not change any output,
also when rows differ in length by far (padding between the prefix and a row's own tokens).

Gemma 3 (sliding-window layers) does not reuse: its window would count the padding.
"""

import pytest

from chateval.backends.base import Backend, ChatMessage, GenerationRequest
from chateval.backends.transformers_backend import (
    MIN_SHARED_PREFIX,
    has_sliding_window,
    shared_prefix_length,
)
from chateval.models import DEFAULT_MODEL, ModelRegistry
from tests.conftest import tiny_config

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


def test_sliding_window_detection() -> None:
    from transformers import Gemma3TextConfig, LlamaConfig

    assert has_sliding_window(Gemma3TextConfig())
    assert not has_sliding_window(LlamaConfig())


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
        assert all(r.cached_tokens >= MIN_SHARED_PREFIX for r in results[1:])
    else:
        assert all(r.cached_tokens == 0 for r in results)
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
    from chateval.backends import create_backend

    backend = create_backend(tiny_config(backend="transformers"), second_model, registry)
    try:
        assert backend.prefix_cache is False  # type: ignore[attr-defined]
        results = backend.generate(requests(second_model, QUESTIONS[:2]))
        assert [r.cached_tokens for r in results] == [0, 0]
    finally:
        backend.close()


@pytest.mark.slow
def test_kept_prefix_is_extended_not_recomputed(transformers_backend: Backend) -> None:
    """A batch whose shared prefix extends a kept one reuses it, with the same answers."""
    backend: Backend = transformers_backend
    backend._prefixes.clear()  # type: ignore[attr-defined]
    generate(backend, requests(DEFAULT_MODEL, QUESTIONS[:2]), True)  # keeps the rules' prefix
    (short,) = backend._prefixes  # type: ignore[attr-defined]
    longer = [q.replace("?", "? Be brief.") for q in ("Why is the sea salty?", "Why is the sky blue?")]
    shared = requests(DEFAULT_MODEL, [f"Two questions follow. {q}" for q in longer])
    assert generate(backend, shared, True) == generate(backend, shared, False)
    kept = list(backend._prefixes)  # type: ignore[attr-defined]
    assert len(kept) == 2 and kept[0] == short and kept[1][: len(short)] == short
    assert len(kept[1]) > len(short)
