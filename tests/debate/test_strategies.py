"""Visibility rules and plans of the three strategies, with a scripted backend."""

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.transcript import Debate, Transcript, Turn, Utterance
from chateval.debate.building import build_debates, build_panel, load_run_items
from chateval.debate.scheduler import Scheduler
from chateval.debate.strategies import get_strategy
from tests.support.helpers import asks_for_scores, prompt_text, tiny_config

VERDICT = "Assistant 1: 7\nAssistant 2: 3\nEvidence: fine"


def tagged_responder(request):  # noqa: ANN001, ANN201
    """Discussion turns say who spoke and what they saw, so visibility can be read back."""
    if asks_for_scores(request):
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


def test_summarizer_adds_each_referees_own_summary_to_its_history() -> None:
    s0, s1 = (
        Utterance(Turn(0, 0, "summary"), "Summarizer", "summary", "sum0"),
        Utterance(Turn(0, 1, "summary"), "Summarizer", "summary", "sum1"),
    )
    t = Transcript((u(0, 0), u(0, 1), s0, s1, u(1, 0), u(1, 1)))
    strategy = get_strategy("simultaneous_summarizer")
    # A referee still sees the whole discussion, with its own summary after the round it followed.
    assert [x.text for x in strategy.visible(t, Turn(1, 0))] == ["r0a0", "r0a1", "sum0"]
    assert [x.text for x in strategy.visible(t, Turn(2, 1))] == ["r0a0", "r0a1", "sum1", "r1a0", "r1a1"]
    # A summary of round 1 sees what its referee has seen, its earlier summary included.
    assert [x.text for x in strategy.visible(t, Turn(1, 0, "summary"))] == [
        "r0a0",
        "r0a1",
        "sum0",
        "r1a0",
        "r1a1",
    ]
    assert strategy.visible(Transcript((u(0, 0), u(0, 1))), Turn(0, 0)) == []


def test_summarizer_requests_and_histories_follow_the_papers_order() -> None:
    """Two referees, three rounds: one summary per referee before each of its turns after the
    first, from the current summary and every line it saw, no task; the summary is added to
    that referee's discussion, which is still quoted whole."""
    log: list[tuple[str, str, str]] = []  # (what, whose, prompt)

    def respond(request):  # noqa: ANN001, ANN202
        prompt = prompt_text(request)
        if asks_for_scores(request):
            return VERDICT
        if prompt.startswith("Summarize the lines"):
            n = sum(what == "summary" for what, _, _ in log)
            log.append(("summary", "", prompt))
            return f"summary {n}"
        speaker = "Critic" if "You are now Critic" in prompt else "Everyday Reader"
        n = sum(what == "talk" for what, _, _ in log)
        log.append(("talk", speaker, prompt))
        return f"{speaker} point {n}"

    config = tiny_config(
        strategy="simultaneous_summarizer",
        rounds=3,
        agents=[{"role": "critic"}, {"role": "everyday_reader"}],
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
        position_calibration=False,
    )
    backend = ScriptedBackend("smollm2-135m", respond)
    panel = build_panel(config)
    debate = build_debates(load_run_items(config))[0]
    Scheduler({"smollm2-135m": backend}).run(panel, [debate])
    sizes = [len(call) for call in backend.calls]
    # talk, 2 summaries, talk, 2 summaries, assessments, scores: no summary before a first turn
    assert sizes == [2, 2, 2, 2, 2, 2]
    assert [what for what, _, _ in log] == ["talk"] * 2 + ["summary"] * 2 + ["talk"] * 2 + ["summary"] * 2 + [
        "talk"
    ] * 2
    summaries = [prompt for what, _, prompt in log if what == "summary"]
    # The first summaries: nothing yet, the round-0 lines; no task text.
    for prompt in summaries[:2]:
        assert "[Current summary]\n(none yet)" in prompt and "[Question]" not in prompt
        assert "[Critic]: Critic point 0" in prompt and "[Everyday Reader]: Everyday Reader point 1" in prompt
    # The Critic's second summary starts from its first (summary 0) and sees it among the lines.
    critic_second = summaries[2]
    assert "[Current summary]\nsummary 0" in critic_second and "[Summarizer]: summary 0" in critic_second
    assert "summary 1" not in critic_second  # the other referee's summary is not its
    assert "[Critic]: Critic point 2" in critic_second
    # The Critic's last turn quotes the whole discussion, its summaries after the rounds they followed.
    critic_last = next(prompt for what, who, prompt in reversed(log) if who == "Critic")
    order = [
        "[Critic]: Critic point 0",
        "[Summarizer]: summary 0",
        "[Critic]: Critic point 2",
        "[Summarizer]: summary 2",
    ]
    positions = [critic_last.index(line) for line in order]
    assert positions == sorted(positions)
    assert "[Summarizer]: summary 1" not in critic_last and "[Summarizer]: summary 3" not in critic_last
    kinds = [x.kind for x in debate.transcript.utterances]
    assert kinds.count("summary") == 4


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


def is_assessment(request) -> bool:  # noqa: ANN001
    return not asks_for_scores(request) and "Give your final verdict" in prompt_text(request)


def test_verdict_instruction_only_in_last_round() -> None:
    _, backend = run_debate("one_by_one", rounds=2, agents=2)
    requests = [r for call in backend.calls for r in call]
    # Round 2: each referee's assessment, then its constrained scores.
    assert [asks_for_scores(r) for r in requests] == [False, False, False, True, False, True]
    # The assessments' constraint holds only how they begin (an explanation comes first).
    assert [r.regex is not None for r in requests] == [False, False, True, True, True, True]
    asked = ["Give your final verdict" in r.messages[-2].content for r in requests]
    assert asked == [False, False, True, True, True, True]


def test_plans() -> None:
    assert len(get_strategy("one_by_one").plan(2, 2)) == 4
    assert len(get_strategy("simultaneous").plan(3, 2)) == 2
    assert len(get_strategy("simultaneous_summarizer").plan(3, 3)) == 5
    assert get_strategy("simultaneous_summarizer").plan(2, 2)[1] == (
        Turn(0, 0, "summary"),
        Turn(0, 1, "summary"),
    )
