"""Batching: one backend call per model per step, whatever the number of items."""

import json
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.core.items import PairwiseItem
from chateval.debate import scheduler
from chateval.debate.building import build_debates, build_panel
from chateval.debate.scheduler import Scheduler
from chateval.errors import BackendError
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, read_jsonl, tiny_config

VERDICT = "Assistant 1: 7\nAssistant 2: 3\nEvidence: fine"


def responder(request: GenerationRequest) -> str:
    return VERDICT if asks_for_scores(request) else "I have a view."


def eighty_items() -> list[PairwiseItem]:
    return [PairwiseItem(str(i), f"q{i}", "a", "b", "A") for i in range(80)]


@pytest.mark.parametrize(
    ("strategy", "reasoning", "calls"),
    [
        # A reasoned verdict is two steps (assessment, then scores): one more call per
        # verdict step; one_by_one has one verdict step per referee.
        ("one_by_one", True, 6),
        ("simultaneous", True, 3),
        ("simultaneous_summarizer", True, 4),
        ("one_by_one", False, 4),
        ("simultaneous", False, 2),
        ("simultaneous_summarizer", False, 3),
    ],
)
def test_batches_per_step_not_per_item(strategy: str, reasoning: bool, calls: int) -> None:
    config = tiny_config(strategy=strategy, verdict={"reasoning": reasoning})
    backend = ScriptedBackend("smollm2-135m", responder)
    debates = build_debates(eighty_items())
    usage = Scheduler({"smollm2-135m": backend}).run(build_panel(config), debates)
    assert len(backend.calls) == calls
    assert usage.total().batches == calls
    per_agent_turns = 80 * 2 * 2 + (80 * 2 if reasoning else 0)
    # One summary per referee (2) after round 1 of 2: 160 summaries for 80 items.
    assert usage.total().requests == per_agent_turns + (
        80 * 2 if strategy == "simultaneous_summarizer" else 0
    )


def test_requests_split_per_model_and_results_in_order() -> None:
    config = tiny_config(
        strategy="simultaneous",
        agents=[{"role": "critic", "model": "m1"}, {"role": "editor", "model": "m2"}],
    )
    b1 = ScriptedBackend("m1", lambda r: "one" if not asks_for_scores(r) else VERDICT)
    b2 = ScriptedBackend("m2", lambda r: "two" if not asks_for_scores(r) else VERDICT)
    debates = build_debates(eighty_items()[:5])
    usage = Scheduler({"m1": b1, "m2": b2}).run(build_panel(config), debates)
    assert len(b1.calls) == len(b2.calls) == 3  # talk, assessments, scores
    assert all(r.model == "m1" for call in b1.calls for r in call)
    assert usage.per_model["m1"].requests == usage.per_model["m2"].requests == 15
    for debate in debates:
        first_round = [x for x in debate.transcript.utterances if x.turn.round == 0]
        assert [(x.speaker, x.text) for x in first_round] == [("Critic", "one"), ("Editor", "two")]


def test_run_writes_outputs_and_counts(tmp_path: Path) -> None:
    config = tiny_config(
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"},
        position_calibration=False,
    )
    backend = ScriptedBackend("smollm2-135m", responder)
    result = run(config, tmp_path / "out", backends={"smollm2-135m": backend})
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {
        "config.yaml",
        "roster.json",
        "items.jsonl",
        "journal.jsonl",
        "transcripts.jsonl",
        "verdicts.jsonl",
        "metrics.json",
        "run.json",
    }
    info = json.loads((out / "run.json").read_text())
    assert info["items"] == 12 and info["batches"] == 6 and info["requests"] == 72
    assert info["verdict_parse_failures"] == 0
    verdicts = read_jsonl(out / "verdicts.jsonl")
    assert all(v["label"] == "A" for v in verdicts)  # every referee scored answer 1 higher
    metrics = json.loads((out / "metrics.json").read_text())
    labels = [v["human_label"] for v in verdicts]
    assert metrics["panel"]["accuracy"]["value"] == pytest.approx(labels.count("A") / 12)
    low, high = metrics["panel"]["accuracy"]["ci95"]
    assert low <= metrics["panel"]["accuracy"]["value"] <= high
    assert set(metrics["referees"]) == {"Critic", "Everyday Reader"}
    assert metrics["position"]["first_position_win_share"] == 1.0
    assert result.run_info == info


def test_finished_run_folder_is_not_overwritten(tmp_path: Path) -> None:
    from chateval.errors import ConfigError

    config = tiny_config()
    backends = {"smollm2-135m": ScriptedBackend("smollm2-135m", responder)}
    run(config, tmp_path, backends=backends)
    with pytest.raises(ConfigError, match="--force"):
        run(config, tmp_path, backends=backends)
    run(config, tmp_path, backends=backends, force=True)


class SlowToStart(StreamingScriptedBackend):
    """An engine whose first ``quiet`` polls finish nothing, as vLLM's do while it compiles a
    constraint; ``quiet=None``: it never finishes anything."""

    def __init__(self, quiet: int | None) -> None:
        super().__init__("smollm2-135m", responder, per_poll=100)
        self.quiet = quiet

    def poll(self) -> list[tuple[str, GenerationResult]]:
        if self.quiet is None or self.polls < self.quiet:
            self.polls += 1
            return []
        return super().poll()


def streaming_run(backend: StreamingScriptedBackend) -> None:
    config = tiny_config()
    Scheduler({"smollm2-135m": backend}).run_streaming(build_panel(config), build_debates(eighty_items()[:2]))


def test_many_quiet_polls_are_no_stall_until_they_also_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle polls alone do not end a run (fast empty steps while a constraint compiles); idle
    polls that also last past the time bound do."""
    monkeypatch.setattr(scheduler, "_MAX_IDLE_POLLS", 50)
    streaming_run(SlowToStart(quiet=500))  # 500 quiet polls, well within the time bound
    monkeypatch.setattr(scheduler, "_MAX_IDLE_SECONDS", 0.05)
    with pytest.raises(BackendError, match="streaming stalled: 2 requests never finished"):
        streaming_run(SlowToStart(quiet=None))
