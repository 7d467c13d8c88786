"""Streaming (no step barrier) and early stopping give the results they promise."""

from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.core.backend import GenerationRequest
from chateval.errors import BackendError
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, prompt_dependent, prompt_text, read_jsonl
from tests.support.scripted import SCRIPTED_MODEL, DiesAtPoll, agreeing_on_boiling_point, three_referee_config

OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")


def outputs(folder: Path) -> dict[str, str]:
    return {name: (folder / name).read_text() for name in OUTPUTS}


SETTINGS = [
    {"strategy": "one_by_one"},
    {"strategy": "simultaneous"},
    {"strategy": "simultaneous_summarizer"},
    {"strategy": "one_by_one", "opinion_probes": True, "early_stop": True},
    {"strategy": "simultaneous_summarizer", "early_stop": True},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_streaming_matches_barrier(settings: dict[str, object], tmp_path: Path) -> None:
    barrier = run(
        three_referee_config(scheduling="barrier", **settings),
        tmp_path / "barrier",
        backends={SCRIPTED_MODEL: StreamingScriptedBackend(SCRIPTED_MODEL, prompt_dependent)},
    )
    streamed_backend = StreamingScriptedBackend(SCRIPTED_MODEL, prompt_dependent)
    streamed = run(
        three_referee_config(scheduling="streaming", **settings),
        tmp_path / "streamed",
        backends={SCRIPTED_MODEL: streamed_backend},
    )
    assert barrier.run_info["scheduling"] == "barrier" and streamed.run_info["scheduling"] == "streaming"
    assert outputs(tmp_path / "barrier") == outputs(tmp_path / "streamed")
    assert streamed.run_info["requests"] == barrier.run_info["requests"]
    assert streamed_backend.polls > 0 and streamed_backend.calls  # it really streamed


def test_streaming_falls_back_to_barrier_without_streaming_backends(tmp_path: Path) -> None:
    result = run(
        three_referee_config(scheduling="auto"),
        tmp_path,
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, prompt_dependent)},
    )
    assert result.run_info["scheduling"] == "barrier"


def test_early_stop_skips_rounds_of_agreeing_items(tmp_path: Path) -> None:
    settings = {"position_calibration": False}
    full = run(
        three_referee_config(**settings),
        tmp_path / "full",
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
    )
    early = run(
        three_referee_config(early_stop=True, **settings),
        tmp_path / "early",
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
    )
    records = read_jsonl(tmp_path / "early/verdicts.jsonl")
    water = [r for r in records if r["label"] == "A"]
    assert [r["item_id"] for r in water] == ["q02"] and early.run_info["early_stopped_debates"] == 1
    # q02 skips rounds 1-2 (3 talks, 3 assessments, 3 scores) and pays one check (3 assessments,
    # 3 scores); the 5 others pay 2 checks each.
    assert early.run_info["requests"] == full.run_info["requests"] - 9 + 6 + 5 * 12
    transcripts = read_jsonl(tmp_path / "early/transcripts.jsonl")
    stopped = [t for t in transcripts if t["item_id"] == water[0]["item_id"]][0]
    kinds = [m["kind"] for m in stopped["messages"]]
    # 3 referees talk in round 0, agree in the check, and stop: their check answers (each an
    # assessment, then scores) are the verdicts.
    assert kinds == ["discussion"] * 3 + ["assessment"] * 3 + ["verdict"] * 3


@pytest.mark.parametrize("resume_with", ["streaming", "barrier"])
@pytest.mark.parametrize("die_at", [2, 9, 25])
def test_streaming_run_resumes_to_identical_outputs(resume_with: str, die_at: int, tmp_path: Path) -> None:
    settings = {"opinion_probes": True, "early_stop": True}
    run(
        three_referee_config(scheduling="streaming", **settings),
        tmp_path / "reference",
        backends={SCRIPTED_MODEL: StreamingScriptedBackend(SCRIPTED_MODEL, prompt_dependent)},
    )
    crashed = tmp_path / "crashed"
    with pytest.raises(BackendError):
        run(
            three_referee_config(scheduling="streaming", **settings),
            crashed,
            backends={SCRIPTED_MODEL: DiesAtPoll(SCRIPTED_MODEL, prompt_dependent, die_at)},
        )
    # The scheduling mode is not part of the results: resuming with the other one is allowed.
    resumed_config = three_referee_config(scheduling="streaming", **settings)
    backend = StreamingScriptedBackend(SCRIPTED_MODEL, prompt_dependent)
    if resume_with == "barrier":
        backend = ScriptedBackend(SCRIPTED_MODEL, prompt_dependent)  # type: ignore[assignment]
    run(resumed_config, crashed, backends={SCRIPTED_MODEL: backend})
    assert outputs(crashed) == outputs(tmp_path / "reference")


def marked(request: GenerationRequest) -> str:
    """Verdict-format answers carrying a marker nobody else may ever see."""
    if asks_for_scores(request):
        return "Assistant 1: 7\nAssistant 2: 2\nEvidence: SECRET-MARK"
    return "Plain talk."


@pytest.mark.parametrize("strategy", ["one_by_one", "simultaneous", "simultaneous_summarizer"])
def test_probe_and_check_answers_stay_hidden(strategy: str) -> None:
    backend = ScriptedBackend(SCRIPTED_MODEL, marked)
    # rounds=3 with early_stop: checks after rounds 0 and 1; the critic disagrees, nobody stops.
    run_config = three_referee_config(strategy=strategy, early_stop=True, opinion_probes=True)
    import tempfile

    from chateval.run.runner import run as run_evaluation

    with tempfile.TemporaryDirectory() as folder:
        run_evaluation(run_config, Path(folder), backends={SCRIPTED_MODEL: backend})
    for call in backend.calls:
        for request in call:
            assert "SECRET-MARK" not in prompt_text(request)


def test_early_stop_leaves_other_debates_unchanged(tmp_path: Path) -> None:
    settings = {"position_calibration": False}
    run(
        three_referee_config(**settings),
        tmp_path / "full",
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
    )
    early_backend = ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)
    early = run(
        three_referee_config(early_stop=True, **settings),
        tmp_path / "early",
        backends={SCRIPTED_MODEL: early_backend},
    )

    transcripts = {name: read_jsonl(tmp_path / name / "transcripts.jsonl") for name in ("full", "early")}
    for full, stopped in zip(transcripts["full"], transcripts["early"], strict=True):
        if full["item_id"] == "q02":
            continue  # the one that stopped
        assert [m for m in stopped["messages"] if not m["probe"]] == full["messages"]
    verdicts = (tmp_path / "early" / "verdicts.jsonl").read_text()
    assert "opinions" not in verdicts  # checks are not opinion probes
    assert early.metrics and early.metrics["per_model"][SCRIPTED_MODEL]["opinion_changes"] is None


def test_resume_may_change_scheduling(tmp_path: Path) -> None:
    crashed = tmp_path / "run"
    with pytest.raises(BackendError):
        run(
            three_referee_config(scheduling="streaming"),
            crashed,
            backends={SCRIPTED_MODEL: DiesAtPoll(SCRIPTED_MODEL, prompt_dependent, 9)},
        )
    run(
        three_referee_config(scheduling="barrier"),
        crashed,
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, prompt_dependent)},
    )
    assert (crashed / "run.json").exists()


def test_early_stop_needs_two_agents() -> None:
    from chateval.errors import ConfigError

    with pytest.raises(ConfigError, match="early_stop' needs at least 2 agents"):
        three_referee_config(early_stop=True, agents=[{"role": "critic"}])
