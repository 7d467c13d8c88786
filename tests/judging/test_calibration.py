"""Position calibration: both orders in the same batches, combined by summed scores."""

import json
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import GenerationRequest
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, prompt_text, read_jsonl, tiny_config


def first_position_lover(request: GenerationRequest) -> str:
    """Always prefers whatever answer is shown first."""
    return "Assistant 1: 8\nAssistant 2: 4\nEvidence: first" if asks_for_scores(request) else "hmm"


def prefers_content(word: str):  # noqa: ANN201
    """Scores the answer containing ``word`` higher, wherever it is shown."""

    def respond(request: GenerationRequest) -> str:
        if not asks_for_scores(request):
            return "hmm"
        prompt = prompt_text(request)
        first = prompt.split("[Assistant 1's answer]")[1].split("[End of Assistant 1's answer]")[0]
        return (
            "Assistant 1: 9\nAssistant 2: 3\nEvidence: x"
            if word in first
            else "Assistant 1: 3\nAssistant 2: 9\nEvidence: x"
        )

    return respond


def run_scripted(
    tmp_path: Path, responder, **overrides: object
) -> tuple[dict, list[dict], dict, ScriptedBackend]:  # noqa: ANN001
    backend = ScriptedBackend("smollm2-135m", responder)
    config = tiny_config(
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"}, **overrides
    )
    run(config, tmp_path, backends={"smollm2-135m": backend})
    info = json.loads((tmp_path / "run.json").read_text())
    verdicts = read_jsonl(tmp_path / "verdicts.jsonl")
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    return info, verdicts, metrics, backend


def test_both_orders_share_the_batches(tmp_path: Path) -> None:
    info, verdicts, _, backend = run_scripted(tmp_path, first_position_lover)
    assert info["debates"] == 24 and info["batches"] == 6 and info["requests"] == 144
    assert len(backend.calls) == 6
    assert all(len(call) == 24 for call in backend.calls)
    assert len(verdicts) == 12
    assert all([o["swapped"] for o in v["orders"]] == [False, True] for v in verdicts)


def test_first_position_bias_calibrates_to_tie(tmp_path: Path) -> None:
    _, verdicts, metrics, _ = run_scripted(tmp_path, first_position_lover)
    assert all(v["label"] == "tie" and v["score_a"] == v["score_b"] == 24 for v in verdicts)
    assert all(v["referee_labels"] == {"Critic": "tie", "Everyday Reader": "tie"} for v in verdicts)
    # Order-level labels: A in (A,B) order and B in (B,A) order: the winner always flips.
    assert metrics["position"]["decisive_items"] == 12
    assert metrics["position"]["decisive_consistency"] == 0.0
    assert metrics["position"]["decisive_flip_share"] == 1.0
    assert metrics["position"]["first_position_win_share"] == 1.0


def test_content_preference_survives_calibration(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text(
        '{"id": "1", "question": "q", "answer_a": "GOOD one", "answer_b": "meh", "label": "A"}\n'
        '{"id": "2", "question": "q", "answer_a": "meh", "answer_b": "GOOD two", "label": "B"}\n'
    )
    backend = ScriptedBackend("smollm2-135m", prefers_content("GOOD"))
    config = tiny_config(data={"format": "jsonl_pairwise", "path": str(data)})
    result = run(config, tmp_path / "out", backends={"smollm2-135m": backend})
    verdicts = read_jsonl(tmp_path / "out/verdicts.jsonl")
    assert [(v["label"], v["score_a"], v["score_b"]) for v in verdicts] == [("A", 36, 12), ("B", 12, 36)]
    assert all([o["label"] for o in v["orders"]] == [v["label"]] * 2 for v in verdicts)
    assert result.metrics is not None
    assert result.metrics["position"]["decisive_consistency"] == 1.0
    assert result.metrics["position"]["first_position_win_share"] == pytest.approx(0.5)
    assert result.metrics["panel"]["accuracy"]["value"] == 1.0


def test_calibration_off_runs_one_order(tmp_path: Path) -> None:
    info, verdicts, metrics, _ = run_scripted(tmp_path, first_position_lover, position_calibration=False)
    assert info["debates"] == 12 and not info["position_calibration"]
    assert all(v["label"] == "A" for v in verdicts)
    assert metrics["position"]["items_in_both_orders"] == 0
    assert metrics["position"]["decisive_consistency"] is None


def test_run_over_user_jsonl_with_field_mapping(tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text(
        '{"uid": "x1", "prompt": "Best pet?", "resp_1": "GOOD: a cat", "resp_2": "a rock", "pref": "first"}\n'
        '{"uid": "x2", "prompt": "Best tea?", "resp_1": "mud", "resp_2": "GOOD: green", "pref": "second"}\n'
        '{"uid": "x3", "prompt": "Best day?", "resp_1": "GOOD: sun", "resp_2": "rain", "pref": "second"}\n'
    )
    config = tiny_config(
        data={
            "format": "table_pairwise",
            "path": str(data),
            "fields": {
                "id": "uid",
                "question": "prompt",
                "answer_a": "resp_1",
                "answer_b": "resp_2",
                "label": "pref",
            },
            "labels": {"first": "A", "second": "B", "same": "tie"},
        }
    )
    backend = ScriptedBackend("smollm2-135m", prefers_content("GOOD"))
    result = run(config, tmp_path / "out", backends={"smollm2-135m": backend})
    verdicts = read_jsonl(tmp_path / "out/verdicts.jsonl")
    assert [(v["item_id"], v["label"], v["human_label"]) for v in verdicts] == [
        ("x1", "A", "A"),
        ("x2", "B", "B"),
        ("x3", "A", "B"),
    ]
    assert result.metrics is not None
    assert result.metrics["panel"]["accuracy"]["value"] == pytest.approx(2 / 3)
