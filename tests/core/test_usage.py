"""Usage counters: one name each in code, the first release's names in stored files."""

from chateval.core.backend import GenerationResult
from chateval.core.usage import ModelUsage


def test_counts_keep_their_stored_names_and_come_back_whole() -> None:
    usage = ModelUsage()
    results = [
        GenerationResult(
            text="a", prompt_tokens=10, generated_tokens=3, finish_reason="stop", cached_prompt_tokens=4
        ),
        GenerationResult(
            text="b", prompt_tokens=12, generated_tokens=5, finish_reason="length", cached_prompt_tokens=0
        ),
    ]
    usage.add(results)
    counts = usage.counts()
    assert counts == {
        "batches": 1,
        "engine_steps": 0,
        "requests": 2,
        "prompt_tokens": 22,
        "completion_tokens": 8,
        "cached_tokens": 4,
    }
    assert ModelUsage.from_counts(counts) == usage
