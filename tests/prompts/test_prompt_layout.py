"""Prompt layouts show the same task and utterances (framed differently), and the conversation
layout extends prefixes.

The conversation layout exists for prefix caching: a turn's prompt must begin with the exact
tokens (prompt and answer) of an earlier request wherever the strategy lets it see one.
"""

import re
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import ChatMessage, GenerationRequest
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.scheduler import Scheduler
from chateval.engines.factory import TokenizerOnly
from chateval.engines.models import ModelRegistry
from chateval.errors import ConfigError
from chateval.prompts.builder import PROMPT_LAYOUTS
from chateval.run.runner import run
from tests.support.helpers import SECOND_MODEL, asks_for_scores, prompt_text, speaker_of, tiny_config

MODEL = "smollm2-135m"
LAYOUTS = list(PROMPT_LAYOUTS)
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]


SPEAKERS = {"Critic", "Critic 1", "Critic 2", "Everyday Reader", "Editor", "Summarizer"}
SUMMARY = "[Your summary of the discussion so far, by your summarizer]\n"
# What informed_responder says, as any layout shows it: talk, or a verdict (assessment, scores).
SAID = r"I count \d+\.(?:\n\nScores:(?:\n(?:Assistant \d|Coherence): \d+)+)?"
# A quoted line: "Name: ...", or the paper layout's "[Name]: ...", or a summary.
QUOTED = re.compile(rf"(?m)^(?:\[?({'|'.join(sorted(SPEAKERS))})\]?: |{re.escape(SUMMARY)})({SAID})")


def shown(request: GenerationRequest) -> list[tuple[str, str]]:
    """The (speaker, text) pairs a request shows, in order, read back from any layout: quoted
    under a name (or as a summary) in user messages, or the speaker's own assistant messages."""
    messages = request.messages
    history = messages[:-1] if messages[-1].role == "assistant" else messages  # not the lead
    said: list[tuple[str, str]] = []
    for previous, message in zip((None, *history), history, strict=False):
        if message.role == "user":
            said += [(name or "Summarizer", text) for name, text in QUOTED.findall(message.content)]
        elif message.role == "assistant":
            name, _, text = message.content.partition(": ")
            if name not in SPEAKERS:  # compact: the name is in the request it answers
                assert previous is not None
                name, text = speaker_of(GenerationRequest("m", (previous,), 1)), message.content
            said.append((name, text))
    return said


def informed_responder(request: GenerationRequest) -> str:
    """Answers from what the speaker is shown, not from how it is laid out: who speaks, the
    item (in its answer order), who said what before, in order, and its own lead."""
    text = prompt_text(request)
    if speaker_of(request) == "Summarizer":  # its prompt, the same in every layout, has no task
        return f"I count {sum(map(ord, text))}."
    item = re.findall(r"\[(?:Assistant 1's answer|Response to judge)\]\n(.*)", text)[0]
    lead = request.messages[-1].content if request.messages[-1].role == "assistant" else ""
    own = lead.removeprefix(f"{speaker_of(request)}:").strip()  # its own assessment, if any
    n = sum(map(ord, repr((speaker_of(request), item, shown(request), request.regex, own))))
    if asks_for_scores(request) and "Coherence" in request.regex:
        return f"\nCoherence: {n % 5 + 1}"
    if asks_for_scores(request):
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
    assert all(results[layout] == results["paper"] for layout in LAYOUTS)


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


def one_debate_requests(
    strategy: str,
    responder,
    layout: str = "conversation",  # noqa: ANN001
) -> list[tuple[GenerationRequest, str]]:
    """Every request of one debate with its answer, in the order they ran."""
    run_config = config(strategy, layout)
    log: list[tuple[GenerationRequest, str]] = []

    def answer(request: GenerationRequest) -> str:
        log.append((request, responder(request)))
        return log[-1][1]

    debates = build_debates(load_run_items(run_config)[:1])
    Scheduler({MODEL: ScriptedBackend(MODEL, answer)}).run(build_panel(run_config), debates)
    return log


def talk(request: GenerationRequest) -> str:
    """Answers shaped like a model's: a reply that continues a lead starts with a space or, for
    scores after ``Scores:``, a line break; one after the chat's generation prompt (the paper
    layout) starts with its first word."""
    if asks_for_scores(request):
        return "\nAssistant 1: 8\nAssistant 2: 3"
    space = " " if request.messages[-1].role == "assistant" else ""
    return (
        space + "The first answer is precise and correct, while the second one hedges; I would rank it lower."
    )


def test_conversation_turns_extend_the_speakers_own_previous_request() -> None:
    """In the conversation layout a referee's turn is its own previous request's prompt and
    answer, plus what the others said since and the request for this turn: the text the
    engine already holds, extended. Its scores continue its own assessment."""
    log = one_debate_requests("one_by_one", talk, "conversation")
    last: dict[str, tuple[GenerationRequest, str]] = {}
    for request, said in log:
        speaker = speaker_of(request)
        if speaker in last:
            previous, answer = last[speaker]
            *history, lead = previous.messages
            answered = ChatMessage("assistant", lead.content + answer)
            if asks_for_scores(request):  # the scores continue the same answer
                assert request.messages[:-1] == tuple(history)
                assert request.messages[-1].content == answered.content + "\n\nScores:"
            else:
                extended = (*history, answered)
                assert request.messages[: len(extended)] == extended
                assert len(request.messages) == len(extended) + 2  # this turn's request and lead
        last[speaker] = (request, said)
    assert len(last) == 3


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_referee_is_shown_another_referees_words_as_its_own(layout: str, strategy: str) -> None:
    """Whatever the layout, an assistant message of a request holds only its speaker's words."""

    def signed(request: GenerationRequest) -> str:
        if asks_for_scores(request):
            return "\nAssistant 1: 4\nAssistant 2: 6"
        return f" words of {speaker_of(request)} #{sum(map(ord, prompt_text(request)))}"

    log = one_debate_requests(strategy, signed, layout)
    others_words = 0
    for request, _ in log:
        speaker = speaker_of(request)
        for message in request.messages:
            spoken_by = set(re.findall(r"words of ([A-Z][a-z]+(?: [A-Z][a-z]+)?) #", message.content))
            if message.role == "assistant":
                assert spoken_by <= {speaker}
            others_words += len(spoken_by - {speaker})
    assert others_words > 0  # the others' words were shown, quoted in user messages


def test_paper_layout_is_one_user_message_in_the_papers_order() -> None:
    """Task, instruction and panel sentence, the discussion under its heading, the speaker's
    role, its turn and (last round only) the verdict instruction; scores continue its own
    assessment; every strategy."""
    for strategy in STRATEGIES:
        for request, _ in one_debate_requests(strategy, talk, "paper"):
            speaker = speaker_of(request)
            roles = [m.role for m in request.messages]
            assert roles == (["user", "assistant"] if asks_for_scores(request) else ["user"])
            body = request.messages[0].content
            if speaker == "Summarizer":
                continue
            marks = ["[Question]", "[What you are asked]", "Other referees have been given the same task"]
            if "[The discussion so far]" in body:
                marks.append("[The discussion so far]")
            marks += [f"You are now {speaker}, one of the referees in this task.", "Now it is your turn"]
            final = "First give a thorough explanation" in body
            if final:
                marks += ["First give a thorough explanation", "You are not required to give the same scores"]
                marks += ["Keep strictly to this format:\nEvaluation evidence: <your explanation>"]
            positions = [body.index(mark) for mark in marks]
            assert positions == sorted(positions), (speaker, marks)
            assert final == request.messages[-1].content.endswith("Scores:") or not asks_for_scores(request)
            for nudge in ("Do not give scores yet", "disagree", "equal scores only"):
                assert nudge not in body


@pytest.fixture(scope="module", params=[MODEL, SECOND_MODEL])
def counter(request: pytest.FixtureRequest, registry: ModelRegistry) -> TokenizerOnly:
    if request.param == SECOND_MODEL:
        request.getfixturevalue("second_model")
    return TokenizerOnly(request.param, registry)


# A real tokenizer takes about 4 s to load on two cores (transformers' import included), which
# the fast tier (under 60 s) cannot spare: the check runs with the real-model tests.
@pytest.mark.slow
@pytest.mark.parametrize("layout", ["paper", "conversation"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_prompts_reuse_earlier_sequences(counter: TokenizerOnly, strategy: str, layout: str) -> None:
    """With the model's real tokenizer and chat template: in the conversation layout a referee's
    prompt starts with the whole token sequence (prompt plus answer) of its own previous turn,
    and every scores request with its own assessment's; in the paper layout every scores
    request too. Every prompt after the first shares a prefix with an earlier one: most of its
    tokens (conversation), or its whole task and instruction (paper)."""
    log = one_debate_requests(strategy, talk, layout)
    sequences: list[list[int]] = []
    own: dict[str, list[int]] = {}
    for request, said in log:
        ids = counter.render_ids(request.messages)
        speaker = speaker_of(request)
        extends = [seq for seq in sequences if ids[: len(seq)] == seq]
        if speaker == "Summarizer":  # its own short prompt, no task: nothing of it is reused
            continue
        if asks_for_scores(request):
            assert extends and extends[-1] == own[speaker]
        elif layout == "conversation" and speaker in own:
            assert ids[: len(own[speaker])] == own[speaker]
        if sequences and layout == "conversation":
            assert max(_common_prefix(ids, seq) for seq in sequences) > 0.5 * len(ids)
        elif sequences:  # paper: the item's task and instruction, before discussion and speaker
            task = re.split(
                r"\n\n(?:\[The discussion so far\]|You are now|\[Your turn\])", request.messages[0].content
            )[0]
            task_tokens = len(counter.render_ids((ChatMessage("user", task),)))
            assert max(_common_prefix(ids, seq) for seq in sequences) >= task_tokens - 4
        sequences.append(ids + counter.tokenizer.encode(said, add_special_tokens=False))
        own[speaker] = sequences[-1]


def _common_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
