"""Visibility rules and plans of the three strategies, with a scripted backend."""

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.scheduler import Scheduler
from chateval.debate.strategies import get_strategy
from tests.support.helpers import prompt_text, tiny_config

VERDICT = "Assistant 1: 7\nAssistant 2: 3\nEvidence: fine"


def tagged_responder(request):  # noqa: ANN001, ANN201
    """Discussion turns say who spoke and what they saw, so visibility can be read back."""
    if request.regex:
        return VERDICT
    return f"TAG seen={prompt_text(request).count('TAG seen=')}"


def run_debate(
    strategy: str, rounds: int = 3, agents: int = 3, layout: str = "conversation"
) -> tuple[Debate, ScriptedBackend]:
    roles = ["critic", "everyday_reader", "subject_expert", "psychologist"][:agents]
    config = tiny_config(
        strategy=strategy,
        prompt_layout=layout,
        rounds=rounds,
        agents=[{"role": r} for r in roles],
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
    )
    backend = ScriptedBackend("smollm2-135m", tagged_responder)
    panel = build_panel(config)
    debates = build_debates(load_run_items(config))
    Scheduler({"smollm2-135m": backend}).run(panel, debates)
    return debates[0], backend


def u(round_: int, agent: int | None, kind: str = "discussion") -> Utterance:
    turn = Turn(round_, agent, "summary" if agent is None else "discussion")
    return Utterance(turn, f"S{agent}", kind, f"r{round_}a{agent}")  # type: ignore[arg-type]


def test_one_by_one_sees_everything_before_including_same_round() -> None:
    t = Transcript((u(0, 0), u(0, 1), u(0, 2), u(1, 0)))
    seen = get_strategy("one_by_one").visible(t, Turn(1, 1))
    assert [x.text for x in seen] == ["r0a0", "r0a1", "r0a2", "r1a0"]
    assert get_strategy("one_by_one").visible(t, Turn(0, 0)) == []


def test_simultaneous_sees_only_earlier_rounds() -> None:
    t = Transcript((u(0, 0), u(0, 1), u(1, 0)))
    seen = get_strategy("simultaneous").visible(t, Turn(1, 1))
    assert [x.text for x in seen] == ["r0a0", "r0a1"]


def test_summarizer_agents_see_only_latest_summary() -> None:
    t = Transcript((u(0, 0), u(0, 1), u(0, None, "summary"), u(1, 0), u(1, 1), u(1, None, "summary")))
    strategy = get_strategy("simultaneous_summarizer")
    assert [x.text for x in strategy.visible(t, Turn(2, 0))] == ["r1aNone"]
    # The summarizer of round 1 sees the previous summary and round 1's talk only.
    t2 = Transcript(t.utterances[:5])
    assert [x.text for x in strategy.visible(t2, Turn(1, None, "summary"))] == ["r0aNone", "r1a0", "r1a1"]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        # agent k of round r sees all earlier utterances: 3 per round before, plus k this round
        ("one_by_one", [0, 1, 2, 3, 4, 5]),
        # everyone sees the previous rounds only
        ("simultaneous", [0, 0, 0, 3, 3, 3]),
    ],
)
@pytest.mark.parametrize("layout", ["conversation", "shared_first", "role_first"])
def test_visibility_end_to_end(strategy: str, expected: list[int], layout: str) -> None:
    debate, _ = run_debate(strategy, layout=layout)
    talk = [x for x in debate.transcript.utterances if x.kind == "discussion"]
    assert [int(x.text.split("=")[1]) for x in talk] == expected


@pytest.mark.parametrize("layout", ["conversation", "shared_first", "role_first"])
def test_summarizer_end_to_end_hides_raw_talk(layout: str) -> None:
    debate, backend = run_debate("simultaneous_summarizer", layout=layout)
    kinds = [x.kind for x in debate.transcript.utterances]
    talk = ["discussion"] * 3 + ["summary"]
    assert kinds == talk * 2 + ["assessment"] * 3 + ["verdict"] * 3
    # Round-2 agents see no raw talk, only the latest summary (which had seen 1 + 3 utterances).
    assessments = [r for call in backend.calls for r in call if is_assessment(r)]
    assert len(assessments) == 3
    for request in assessments:
        prompt = prompt_text(request)
        assert prompt.count("TAG seen=") == 1 and "TAG seen=4" in prompt


def is_assessment(request) -> bool:  # noqa: ANN001
    return not request.regex and "Give your final verdict" in prompt_text(request)


def test_verdict_instruction_only_in_last_round() -> None:
    _, backend = run_debate("one_by_one", rounds=2, agents=2)
    requests = [r for call in backend.calls for r in call]
    # Round 2: each referee's assessment, then its constrained scores.
    assert [r.regex is not None for r in requests] == [False, False, False, True, False, True]
    asked = ["Give your final verdict" in r.messages[-2].content for r in requests]
    assert asked == [False, False, True, True, True, True]


def test_plans() -> None:
    assert len(get_strategy("one_by_one").plan(2, 2)) == 4
    assert len(get_strategy("simultaneous").plan(3, 2)) == 2
    assert len(get_strategy("simultaneous_summarizer").plan(3, 3)) == 5
