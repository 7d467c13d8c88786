"""What a referee is given at its turn, in every strategy and layout (scripted backend):
its own persona, every earlier utterance it may see under its speaker's name, and, for its
scores, its own assessment to continue. A single referee reasons before it scores too."""

import itertools

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import ChatMessage, GenerationRequest
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.scheduler import Scheduler
from chateval.prompts.builder import PROMPT_LAYOUTS, get_role
from tests.support.helpers import asks_for_scores, prompt_text, tiny_config

MODEL = "smollm2-135m"
ROLES = ["general_public", "critic", "news_author"]
STRATEGIES = ["one_by_one", "simultaneous", "simultaneous_summarizer"]
# compact is the earlier layout, kept to measure what these guarantees cost: it has none of them.
FAITHFUL_LAYOUTS = [layout for layout in PROMPT_LAYOUTS if layout != "compact"]


def unique_responder() -> tuple[list[tuple[GenerationRequest, str]], object]:
    """Every answer is different, so finding it in a later prompt proves it was shown."""
    counter = itertools.count()
    log: list[tuple[GenerationRequest, str]] = []

    def respond(request: GenerationRequest) -> str:
        n = next(counter)
        text = (
            f"\nAssistant 1: {n % 9 + 1}\nAssistant 2: {n % 7 + 1}"
            if asks_for_scores(request)
            else f"point {n} made"
        )
        log.append((request, text))
        return text

    return log, respond


def asked(request: GenerationRequest) -> str:
    """The user message that asks the speaker to talk (the last one)."""
    return next(m.content for m in reversed(request.messages) if m.role == "user")


def run_logged(strategy: str, layout: str, **overrides: object):  # noqa: ANN201
    log, respond = unique_responder()
    config = tiny_config(
        strategy=strategy,
        prompt_layout=layout,
        rounds=2,
        agents=[{"role": r} for r in ROLES],
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
        **overrides,
    )
    panel = build_panel(config)
    debates = build_debates(load_run_items(config), position_calibration=True)
    Scheduler({MODEL: ScriptedBackend(MODEL, respond)}).run(panel, debates)  # type: ignore[arg-type]
    return panel, debates, log


@pytest.mark.parametrize("layout", FAITHFUL_LAYOUTS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_turn_carries_persona_attribution_and_own_assessment(strategy: str, layout: str) -> None:
    panel, debates, log = run_logged(strategy, layout)
    personas = {get_role(r).name: " ".join(get_role(r).description.split()) for r in ROLES}
    answers = {text.strip(): request for request, text in log}
    scored = 0
    for debate in debates:
        said = debate.transcript.utterances
        for index, utterance in enumerate(said):
            if utterance.kind == "summary":
                continue
            request = answers[utterance.text]
            name = utterance.speaker
            # The speaker's own persona is in the message that asks it to speak; outside the
            # paper layout its answer continues a lead with its name.
            if layout != "paper":
                assert request.messages[-1].role == "assistant"
                assert request.messages[-1].content.startswith(f"{name}:")
            assert personas[name] in asked(request)
            # Every earlier utterance it may see is shown under its speaker's name.
            shown = prompt_text(request)
            for earlier in panel.visible(debate, utterance.turn):
                if earlier.kind in ("discussion", "assessment"):
                    assert f"{quoted(earlier.speaker, layout)}: {earlier.text}" in shown
            # Its scores continue its own assessment.
            if utterance.kind == "verdict":
                assessment = next(u for u in said[:index] if u.turn == utterance.turn.reasoned())
                assert assessment.kind == "assessment" and assessment.speaker == name
                named = "" if layout == "paper" else f"{name}: "
                assert (
                    request.regex and request.messages[-1].content == f"{named}{assessment.text}\n\nScores:"
                )
                scored += 1
    assert scored == len(debates) * len(ROLES)


def quoted(speaker: str, layout: str) -> str:
    """How a layout names the speaker of a quoted line: the paper's 2023 form "[Critic]: ..."."""
    return f"[{speaker}]" if layout == "paper" else speaker


@pytest.mark.parametrize("layout", FAITHFUL_LAYOUTS)
def test_a_later_referee_sees_an_earlier_verdict_with_its_reasoning(layout: str) -> None:
    """One-by-one: the second referee's last-round turn shows the first referee's whole verdict."""
    panel, debates, log = run_logged("one_by_one", layout)
    said = debates[0].transcript.utterances
    first = [u for u in said if u.speaker == "General Public" and u.kind in ("assessment", "verdict")]
    later = next(u for u in said if u.speaker == "Critic" and u.kind == "assessment")
    request = {text.strip(): r for r, text in log}[later.text]
    quote = quoted("General Public", layout)
    assert f"{quote}: {first[0].text}\n\nScores:\n{first[1].text}" in prompt_text(request)


@pytest.mark.parametrize("task", ["pairwise", "direct"])
def test_single_agent_baseline_reasons_before_it_scores(task: str) -> None:
    """The paper's single referee: no persona and no panel, only the task, the instruction and
    the verdict instruction; it explains, then its scores continue that explanation."""
    overrides: dict[str, object] = {
        "data": {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1}
    }
    if task == "direct":
        overrides = {
            "task": "direct",
            "data": {"format": "jsonl_direct", "path": "samples/quickstart_direct.jsonl", "limit": 1},
            "dimensions": [{"name": "coherence", "description": "makes sense"}],
        }
    log, respond = unique_responder()
    if task == "direct":
        responses = iter(["the reply follows on well", "\nCoherence: 4"])
        respond = lambda request: next(responses)  # noqa: E731
    config = tiny_config(rounds=1, agents=[{"role": "referee"}], position_calibration=False, **overrides)
    backend = ScriptedBackend(MODEL, respond)  # type: ignore[arg-type]
    debates = build_debates(load_run_items(config))
    Scheduler({MODEL: backend}).run(build_panel(config), debates)
    requests = [r for call in backend.calls for r in call]
    assert [asks_for_scores(r) for r in requests] == [False, True]
    assessment = debates[0].transcript.utterances[0]
    assert [m.role for m in requests[0].messages] == ["user"]
    prompt = requests[0].messages[0].content
    assert assessment.kind == "assessment" and "First give a thorough explanation" in prompt
    for panel_talk in ("referee", "Referee", "discussion", "your turn", "You are", "the same scores"):
        assert panel_talk not in prompt
    assert requests[1].messages == (
        requests[0].messages[0],
        ChatMessage("assistant", f"{assessment.text}\n\nScores:"),
    )
    assert requests[0].max_tokens == config.verdict.reasoning_max_tokens and requests[1].max_tokens < 40


def test_reasoning_off_keeps_one_constrained_verdict_request() -> None:
    panel, debates, log = run_logged("simultaneous", "conversation", verdict={"reasoning": False})
    kinds = [u.kind for u in debates[0].transcript.utterances]
    assert kinds == ["discussion"] * 3 + ["verdict"] * 3
    verdict_requests = [r for r, _ in log if asks_for_scores(r)]
    assert all("Evidence" in r.regex for r in verdict_requests)  # type: ignore[operator]
    assert all(
        r.messages[-1].content in {"General Public:", "Critic:", "News Author:"} for r in verdict_requests
    )


def test_scores_written_in_the_assessment_are_left_to_the_constrained_request() -> None:
    """A referee that writes its scores in free text has them cut there: the constrained
    request continues from the same point and writes the only scores that count."""
    answers = iter(
        ["Answer 1 is exact.\nScores:\nAssistant 1: 9\nAssistant 2: 2", "\nAssistant 1: 8\nAssistant 2: 3"]
    )
    config = tiny_config(
        rounds=1,
        agents=[{"role": "critic"}],
        position_calibration=False,
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
    )
    backend = ScriptedBackend(MODEL, lambda request: next(answers))
    debates = build_debates(load_run_items(config))
    Scheduler({MODEL: backend}).run(build_panel(config), debates)
    assessment, verdict = debates[0].transcript.utterances
    assert assessment.text == "Answer 1 is exact." and verdict.text == "Assistant 1: 8\nAssistant 2: 3"
    assert backend.calls[1][0].messages[-1].content == "Answer 1 is exact.\n\nScores:"
