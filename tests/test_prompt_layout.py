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
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.scheduler import Scheduler
from chateval.errors import ConfigError
from chateval.models import ModelRegistry
from chateval.prompts import PROMPT_LAYOUTS
from chateval.runner import run
from tests.conftest import SECOND_MODEL, prompt_text, tiny_config

MODEL = "smollm2-135m"
LAYOUTS = list(PROMPT_LAYOUTS)
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]


SPEAKERS = {"Critic", "Critic 1", "Critic 2", "Everyday Reader", "Editor", "Summarizer"}
SUMMARY = "[The note taker's summary of the discussion so far]\n"
DISCUSSION = "[Panel discussion so far]\n"


SPEAKER = re.compile(r"You are (the panel's note taker|[A-Z][a-z]+(?: [A-Z][a-z]+)*(?: \d+)?)\.")


def speaker_of(request: GenerationRequest) -> str:
    """Who a request asks to speak: named in the last request it was given (any layout)."""
    asked = next(m for m in reversed(request.messages) if m.role == "user")
    name = SPEAKER.findall(asked.content)[-1]
    return "Summarizer" if name == "the panel's note taker" else name


def shown(request: GenerationRequest) -> list[tuple[str, str]]:
    """The (speaker, text) pairs a request shows, in order, read back from any layout."""
    messages = request.messages
    if "[How the panel works]" in messages[1].content:
        return _conversation(messages)
    body = messages[1].content  # shared_first / role_first: one user message
    if DISCUSSION not in body:
        return []
    said: list[tuple[str, str]] = []
    for line in body.split(DISCUSSION)[1].split("\n[Your turn")[0].splitlines():
        name, _, rest = line.partition(": ")
        if name in SPEAKERS:
            said.append((name, rest))
        else:  # a verdict's further lines
            said[-1] = (said[-1][0], said[-1][1] + "\n" + line)
    return [(name, text.strip()) for name, text in said]


def _conversation(messages: tuple[ChatMessage, ...]) -> list[tuple[str, str]]:
    history = messages[:-1] if messages[-1].role == "assistant" else messages  # not the lead
    pairs: list[tuple[str, str]] = []
    for previous, message in zip(history, history[1:], strict=False):
        if previous.role == "user" and SUMMARY in previous.content:
            pairs.append(("Summarizer", previous.content.split(SUMMARY)[1].split("\n")[0]))
        if message.role == "assistant":
            name, _, text = message.content.partition(": ")
            if name not in SPEAKERS:  # compact: the name is in the request it answers
                name, text = SPEAKER.findall(previous.content)[-1], message.content
            pairs.append((name, text))
    if SUMMARY in history[-1].content:
        pairs.append(("Summarizer", history[-1].content.split(SUMMARY)[1].split("\n")[0]))
    return pairs


def informed_responder(request: GenerationRequest) -> str:
    """Answers from what the speaker is shown, not from how it is laid out: who speaks, the
    item (in its answer order), who said what before, in order, and its own lead."""
    text = prompt_text(request)
    item = re.findall(r"\[(?:Assistant 1's answer|Response to judge)\]\n(.*)", text)[0]
    lead = request.messages[-1].content if request.messages[-1].role == "assistant" else ""
    own = lead.removeprefix(f"{speaker_of(request)}:").strip()  # its own assessment, if any
    n = sum(map(ord, repr((speaker_of(request), item, shown(request), request.regex, own))))
    if request.regex and "Coherence" in request.regex:
        return f"\nCoherence: {n % 5 + 1}"
    if request.regex:
        return f"\nAssistant 1: {n % 10 + 1}\nAssistant 2: {n % 7 + 1}"
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
    assert all(results[layout] == results["conversation"] for layout in LAYOUTS)


def test_conversation_shows_each_utterance_under_its_speaker() -> None:
    log = one_debate_requests("one_by_one", informed_responder)
    last = log[-1][0]  # the last referee's scores
    assert [speaker for speaker, _ in shown(last)] == ["Critic", "Everyday Reader", "Editor"] * 2 + [
        "Critic",
        "Everyday Reader",
    ]
    # Two rounds of talk, then two whole verdicts: each assessment with the scores after it.
    answers = [answer.strip() for _, answer in log[:-2]]
    talk, verdicts = answers[:6], answers[6:]
    merged = [f"{verdicts[i]}\n\nScores:\n{verdicts[i + 1]}" for i in (0, 2)]
    assert [text for _, text in shown(last)] == talk + merged


def test_conversation_needs_distinct_speaker_names(tmp_path: Path) -> None:
    clashing = [{"role": "critic"}, {"role": "critic"}, {"role": "editor", "name": "Critic 2"}]
    with pytest.raises(ConfigError, match="Critic 2"):
        run(config("one_by_one", "conversation", agents=clashing), tmp_path, backends={})


def test_shared_first_and_role_first_reorder_the_same_text(tmp_path: Path) -> None:
    first_prompts = {}
    for layout in ("shared_first", "role_first"):
        backend = ScriptedBackend(MODEL, informed_responder)
        run(config("one_by_one", layout), tmp_path / layout, backends={MODEL: backend})
        first_prompts[layout] = backend.calls[0][0].messages[-2].content
    assert first_prompts["shared_first"].startswith("[Task]")
    assert first_prompts["role_first"].startswith("[Your turn: Critic]")
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
    """Answers shaped like a model's: they continue the lead, so they start with a space or,
    for scores after ``Scores:``, a line break."""
    if request.regex:
        return "\nAssistant 1: 8\nAssistant 2: 3"
    return " The first answer is precise and correct, while the second one hedges; I would rank it lower."


def test_conversation_turns_extend_the_previous_request() -> None:
    """In one-by-one talk a turn's prompt is the previous request's prompt and answer, plus the
    request for this turn: the text the engine already holds, extended."""
    log = one_debate_requests("one_by_one", talk)
    for (previous, said), (request, _) in zip(log, log[1:], strict=False):
        *history, lead = previous.messages
        answered = ChatMessage("assistant", lead.content + said)
        if request.regex:  # the scores continue the same answer
            assert request.messages[:-1] == tuple(history)
            assert request.messages[-1].content == answered.content + "\n\nScores:"
            continue
        extended = (*history, answered)
        assert request.messages[: len(extended)] == extended
        assert len(request.messages) == len(extended) + 2  # this turn's request and lead


@pytest.fixture(scope="module", params=[MODEL, SECOND_MODEL])
def counter(request: pytest.FixtureRequest, registry: ModelRegistry) -> TokenizerOnly:
    if request.param == SECOND_MODEL:
        request.getfixturevalue("second_model")
    return TokenizerOnly(request.param, registry)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_conversation_prompts_start_with_an_earlier_sequence(counter: TokenizerOnly, strategy: str) -> None:
    """With the model's real tokenizer and chat template, a prompt starts with the whole token
    sequence (prompt plus answer) of an earlier request wherever the strategy lets it see one:
    every turn after the first in one-by-one talk (the previous turn's, adding at most this turn's
    request: persona and instruction), every turn after round 0 in simultaneous talk, every
    scores request (its own assessment's), and every summary (the round's first speaker's).
    Referees after a summary share the rules, task and summary with each other."""
    log = one_debate_requests(strategy, talk)
    sequences: list[list[int]] = []
    for index, (request, said) in enumerate(log):
        ids = counter.render_ids(request.messages)
        extends = [seq for seq in sequences if ids[: len(seq)] == seq]
        if strategy == "one_by_one" and index > 0:
            assert extends and extends[-1] == sequences[-1] and len(ids) - len(sequences[-1]) <= 160
        if request.regex:
            assert extends
        if strategy == "simultaneous" and index >= 3:  # round 1 on (3 referees)
            assert extends
        if speaker_of(request) == "Summarizer":
            assert extends
        if sequences:
            assert max(_common_prefix(ids, seq) for seq in sequences) > 0.5 * len(ids)
        sequences.append(ids + counter.tokenizer.encode(said, add_special_tokens=False))


def _common_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
