"""Prompt layouts carry the same information, and the conversation layout extends prefixes.

The conversation layout exists for prefix caching: each turn's prompt must begin with the exact
tokens (prompt and answer) of the request that produced the speaker's last visible utterance.
"""

import re
from pathlib import Path

import pytest

from chateval.backends import TokenizerOnly
from chateval.backends.base import ChatMessage, GenerationRequest
from chateval.backends.scripted import ScriptedBackend
from chateval.debate.scheduler import Scheduler
from chateval.models import ModelRegistry
from chateval.runner import build_debates, build_panel, load_run_items, run
from tests.conftest import SECOND_MODEL, prompt_text, tiny_config

MODEL = "smollm2-135m"
LAYOUTS = ["conversation", "shared_first", "role_first"]
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]


def informed_responder(request: GenerationRequest) -> str:
    """Answers from what the speaker knows, not from how it is laid out: who speaks, which
    answer is shown first, and which earlier utterances are visible."""
    text = prompt_text(request)
    speaker = re.findall(r"You are (the panel's note taker|[A-Z][a-z]+(?: [A-Z][a-z]+)*)\.", text)[-1]
    first_answer = text.split("[Assistant 1's answer]")[1].split("[End of")[0]
    visible = sorted(re.findall(r"I count \d+\.", text))
    n = sum(map(ord, speaker + first_answer + "".join(visible) + str(request.regex)))
    if request.regex:
        return f"Assistant 1: {n % 10 + 1}\nAssistant 2: {n % 7 + 1}\nEvidence: n={n}"
    return f"I count {n}."


def config(strategy: str, layout: str, **overrides: object):  # noqa: ANN201
    return tiny_config(
        strategy=strategy,
        prompt_layout=layout,
        rounds=3,
        agents=[{"role": "critic"}, {"role": "everyday_reader"}, {"role": "editor"}],
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 4},
        **overrides,
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_layouts_give_identical_results(strategy: str, tmp_path: Path) -> None:
    results = {}
    for layout in LAYOUTS:
        backend = ScriptedBackend(MODEL, informed_responder)
        run(config(strategy, layout, opinion_probes=True), tmp_path / layout, backends={MODEL: backend})
        results[layout] = [
            (tmp_path / layout / name).read_text() for name in ("verdicts.jsonl", "metrics.json")
        ]
    assert results["conversation"] == results["shared_first"] == results["role_first"]


def test_shared_first_and_role_first_reorder_the_same_text(tmp_path: Path) -> None:
    first_prompts = {}
    for layout in ("shared_first", "role_first"):
        backend = ScriptedBackend(MODEL, informed_responder)
        run(config("one_by_one", layout), tmp_path / layout, backends={MODEL: backend})
        first_prompts[layout] = backend.calls[0][0].messages[-1].content
    assert first_prompts["shared_first"].startswith("[Task]")
    assert first_prompts["role_first"].startswith("[Your role]")
    assert sorted(first_prompts["shared_first"].split()) == sorted(first_prompts["role_first"].split())


def one_debate_requests(strategy: str, responder) -> list[tuple[GenerationRequest, str]]:  # noqa: ANN001
    """Every request of one debate with its answer, in the order they ran."""
    run_config = config(strategy, "conversation")
    log: list[tuple[GenerationRequest, str]] = []

    def answer(request: GenerationRequest) -> str:
        log.append((request, responder(request)))
        return log[-1][1]

    debates = build_debates(load_run_items(run_config)[:1])
    Scheduler({MODEL: ScriptedBackend(MODEL, answer)}).run(build_panel(run_config), debates)
    return log


def talk(request: GenerationRequest) -> str:
    if request.regex:
        return "Assistant 1: 8\nAssistant 2: 3\nEvidence: the first answer names the right boiling point."
    return "The first answer is precise and correct, while the second one hedges; I would rank it lower."


def test_conversation_turns_extend_the_previous_request() -> None:
    log = one_debate_requests("one_by_one", talk)
    for (previous, said), (request, _) in zip(log, log[1:], strict=False):
        extended = (*previous.messages, ChatMessage("assistant", said))
        assert request.messages[: len(extended)] == extended
        assert len(request.messages) == len(extended) + 1  # plus the short request for this turn
        assert len(request.messages[-1].content) < 80


@pytest.fixture(scope="module", params=[MODEL, SECOND_MODEL])
def counter(request: pytest.FixtureRequest, registry: ModelRegistry) -> TokenizerOnly:
    if request.param == SECOND_MODEL:
        request.getfixturevalue("second_model")
    return TokenizerOnly(request.param, registry)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_conversation_prompts_start_with_an_earlier_sequence(counter: TokenizerOnly, strategy: str) -> None:
    """With the model's real tokenizer and chat template: every prompt after a debate's first
    starts with the token ids of an earlier request's prompt plus its answer, so an engine's
    prefix cache has all of it but the new turn's short request (and the template's tokens)."""
    log = one_debate_requests(strategy, talk)
    sequences: list[list[int]] = []
    for request, said in log:
        ids = counter.render_ids(request.messages)
        if sequences:
            shared = max(_common_prefix(ids, seq) for seq in sequences)
            assert len(ids) - shared <= 40 if strategy == "one_by_one" else shared > 0.5 * len(ids)
        sequences.append(ids + counter.tokenizer.encode(said, add_special_tokens=False))
    if strategy == "one_by_one":
        # the whole previous sequence is reused, not just most of it
        for (request, _), previous in zip(log[1:], sequences, strict=False):
            assert counter.render_ids(request.messages)[: len(previous)] == previous


def _common_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
