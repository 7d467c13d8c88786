"""Prompt layouts show the same task and utterances (framed differently), and the conversation
layout extends prefixes.

The conversation layout exists for prefix caching: a turn's prompt must begin with the exact
tokens (prompt and answer) of an earlier request wherever the strategy lets it see one.
"""

import re
from pathlib import Path

import pytest

from chateval.backends import TokenizerOnly
from chateval.backends.base import ChatMessage, GenerationRequest
from chateval.backends.scripted import ScriptedBackend
from chateval.debate.scheduler import Scheduler
from chateval.errors import ConfigError
from chateval.models import ModelRegistry
from chateval.prompts import PROMPT_LAYOUTS
from chateval.runner import build_debates, build_panel, load_run_items, run
from tests.conftest import SECOND_MODEL, prompt_text, tiny_config

MODEL = "smollm2-135m"
LAYOUTS = list(PROMPT_LAYOUTS)
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]


SPEAKER = re.compile(r"You are (the panel's note taker|[A-Z][a-z]+(?: [A-Z][a-z]+)*(?: \d+)?)\.")
SPEAKERS = {"Critic", "Critic 1", "Critic 2", "Everyday Reader", "Editor", "Summarizer"}
SUMMARY = "[The note taker's summary of the discussion so far]\n"


def shown(request: GenerationRequest) -> list[tuple[str, str]]:
    """The (speaker, text) pairs a request shows, in order, read back from any layout."""
    messages = request.messages
    if "[How the panel works]" not in messages[1].content:  # shared_first / role_first
        body = messages[1].content
        if "[Panel discussion so far]\n" not in body:
            return []
        section = body.split("[Panel discussion so far]\n")[1].split("\n\n")[0]
        said: list[tuple[str, str]] = []
        for line in section.splitlines():
            name, _, rest = line.partition(": ")
            if name in SPEAKERS:
                said.append((name, rest))
            else:  # a verdict's further lines
                said[-1] = (said[-1][0], said[-1][1] + "\n" + line)
        return said
    pairs: list[tuple[str, str]] = []
    for previous, message in zip(messages, messages[1:], strict=False):
        if previous.role == "user" and SUMMARY in previous.content:
            pairs.append(("Summarizer", previous.content.split(SUMMARY)[1].split("\n")[0]))
        if message.role == "assistant":
            pairs.append((SPEAKER.findall(previous.content)[-1], message.content))
    if SUMMARY in messages[-1].content:
        pairs.append(("Summarizer", messages[-1].content.split(SUMMARY)[1].split("\n")[0]))
    return pairs


def informed_responder(request: GenerationRequest) -> str:
    """Answers from what the speaker is shown, not from how it is laid out: who speaks, the
    item (in its answer order), and who said what before, in order."""
    text = prompt_text(request)
    speaker = SPEAKER.findall(request.messages[-1].content)[-1]
    item = re.findall(r"\[(?:Assistant 1's answer|Response to judge)\]\n(.*)", text)[0]
    n = sum(map(ord, repr((speaker, item, shown(request), request.regex))))
    if request.regex and "Coherence" in request.regex:
        return f"Coherence: {n % 5 + 1}\nEvidence: n={n}"
    if request.regex:
        return f"Assistant 1: {n % 10 + 1}\nAssistant 2: {n % 7 + 1}\nEvidence: n={n}"
    return f"I count {n}."


DIRECT = {
    "task": "direct",
    "data": {"format": "jsonl_direct", "path": "samples/quickstart_direct.jsonl", "limit": 3},
    "dimensions": [{"name": "coherence", "description": "makes sense"}],
}


def config(strategy: str, layout: str, **overrides: object):  # noqa: ANN201
    tree: dict[str, object] = {
        "strategy": strategy,
        "prompt_layout": layout,
        "rounds": 3,
        "agents": [{"role": "critic"}, {"role": "everyday_reader"}, {"role": "editor"}],
        "data": {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 4},
    }
    tree.update(overrides)
    return tiny_config(**tree)


VARIANTS = {
    "pairwise": {"opinion_probes": True},
    "direct": DIRECT,
    "repeated_roles_early_stop": {
        "agents": [{"role": "critic"}, {"role": "critic"}, {"role": "editor"}],
        "early_stop": True,
    },
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_layouts_give_identical_results(strategy: str, variant: str, tmp_path: Path) -> None:
    results = {}
    for layout in LAYOUTS:
        backend = ScriptedBackend(MODEL, informed_responder)
        run(config(strategy, layout, **VARIANTS[variant]), tmp_path / layout, backends={MODEL: backend})
        results[layout] = [
            (tmp_path / layout / name).read_text() for name in ("verdicts.jsonl", "metrics.json")
        ]
    assert results["conversation"] == results["shared_first"] == results["role_first"]


def test_conversation_shows_each_utterance_under_its_speaker() -> None:
    log = one_debate_requests("one_by_one", informed_responder)
    last = log[-1][0]
    assert [speaker for speaker, _ in shown(last)] == ["Critic", "Everyday Reader", "Editor"] * 2 + [
        "Critic",
        "Everyday Reader",
    ]
    assert [text for _, text in shown(last)] == [answer for _, answer in log[:-1]]


def test_conversation_needs_distinct_speaker_names(tmp_path: Path) -> None:
    clashing = [{"role": "critic"}, {"role": "critic"}, {"role": "editor", "name": "Critic 2"}]
    with pytest.raises(ConfigError, match="Critic 2"):
        run(config("one_by_one", "conversation", agents=clashing), tmp_path, backends={})


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
    """With the model's real tokenizer and chat template, a prompt starts with the whole token
    sequence (prompt plus answer) of an earlier request wherever the strategy lets it see one:
    every turn after the first in one-by-one talk (the previous turn's, adding at most 40 new
    tokens), every turn after round 0 in simultaneous talk, and every summary (the round's first
    speaker's). Referees after a summary share the rules, task and summary with each other."""
    log = one_debate_requests(strategy, talk)
    sequences: list[list[int]] = []
    for index, (request, said) in enumerate(log):
        ids = counter.render_ids(request.messages)
        extends = [seq for seq in sequences if ids[: len(seq)] == seq]
        if strategy == "one_by_one" and index > 0:
            assert extends and extends[-1] == sequences[-1] and len(ids) - len(sequences[-1]) <= 40
        if strategy == "simultaneous" and index >= 3:  # round 1 on (3 referees)
            assert extends
        if "You are the panel's note taker" in request.messages[-1].content:
            assert extends
        if sequences:
            assert max(_common_prefix(ids, seq) for seq in sequences) > 0.5 * len(ids)
        sequences.append(ids + counter.tokenizer.encode(said, add_special_tokens=False))


def _common_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
