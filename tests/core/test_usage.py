"""Usage counters: one name each, in code and in every file; files of earlier releases read
through chateval.record.migrations."""

from chateval.core.backend import GenerationResult
from chateval.core.usage import ModelUsage
from chateval.record.migrations import counts_as_today


def test_counts_have_one_name_each_and_come_back_whole() -> None:
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
        "generated_tokens": 8,
        "cached_prompt_tokens": 4,
    }
    assert ModelUsage.from_counts(counts) == usage
    assert counts_as_today(counts) == counts  # today's counts pass unchanged


def test_counts_of_earlier_releases_read_under_todays_names() -> None:
    first_release = {
        "backend_calls": 2,
        "requests": 4,
        "prompt_tokens": 40,
        "completion_tokens": 8,
        "cached_tokens": 1,
    }
    assert counts_as_today(first_release) == {
        "batches": 2,
        "engine_steps": 0,
        "requests": 4,
        "prompt_tokens": 40,
        "generated_tokens": 8,
        "cached_prompt_tokens": 1,
    }
