"""Context-length policy: over-long items are cut to fit (or refused) before a run starts."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.core.backend import GenerationRequest
from chateval.engines.context import _water_level
from chateval.engines.factory import Engines
from chateval.errors import DataError
from chateval.run.runner import run
from tests.support.helpers import MODELS_DIR, asks_for_scores, prompt_text, read_jsonl, tiny_config

MODEL = "smollm2-135m"
WINDOW = 900  # scripted tokens are words


def longest_talk(request: GenerationRequest) -> str:
    """Every utterance as long as allowed, so the bound is tested at its worst."""
    if asks_for_scores(request):  # a verdict that fills its budget too: later referees see it
        return "Assistant 1: 3\nAssistant 2: 5\nEvidence: " + " ".join(["why"] * (request.max_tokens - 6))
    return " ".join(["blah"] * request.max_tokens)


def write_items(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def pairwise_data(tmp_path: Path, answer_words: int) -> dict[str, object]:
    long = " ".join(f"w{i}" for i in range(answer_words))
    records: list[dict[str, object]] = [
        {"id": "short", "question": "Why is the sky blue?", "answer_a": "Scattering.", "answer_b": "Dust."},
        {"id": "long", "question": "Summarise this.", "answer_a": long, "answer_b": "A short summary."},
    ]
    return {"format": "jsonl_pairwise", "path": str(write_items(tmp_path / "items.jsonl", records))}


def test_water_level_cuts_longest_fields_first() -> None:
    assert _water_level([100, 10], 30) == 70
    assert _water_level([50, 50], 20) == 40
    assert _water_level([5, 5], 100) == 0


def test_long_answer_is_cut_so_every_prompt_fits(tmp_path: Path) -> None:
    backend = ScriptedBackend(MODEL, longest_talk, context_window=WINDOW)
    config = tiny_config(data=pairwise_data(tmp_path, 2000))
    result = run(config, tmp_path / "out", backends={MODEL: backend})

    for batch in backend.calls:
        for request in batch:
            assert backend.count_prompt_tokens(request.messages) + request.max_tokens <= WINDOW
    records = {r["item_id"]: r for r in read_jsonl(tmp_path / "out/verdicts.jsonl")}
    assert records["short"]["truncated"] is None
    before, after = records["long"]["truncated"][MODEL]["answer_a"]
    assert before == 2000 and 0 < after < WINDOW
    assert "answer_b" not in records["long"]["truncated"][MODEL]  # the short answer is kept whole
    assert result.run_info["truncated_items"] == 1


def test_fail_policy_refuses_before_any_request(tmp_path: Path) -> None:
    backend = ScriptedBackend(MODEL, longest_talk, context_window=WINDOW)
    config = tiny_config(data=pairwise_data(tmp_path, 2000), context_policy="fail")
    with pytest.raises(DataError, match=r"items.jsonl: item 'long': its debate needs up to \d+ tokens"):
        run(config, tmp_path / "out", backends={MODEL: backend})
    assert backend.calls == []
    assert not (tmp_path / "out").exists()  # refused before the run folder was made


def test_fail_policy_refuses_before_any_model_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``chateval run`` counts with the model's tokenizer alone, as ``chateval check`` does: an
    item over the context is one line, no model loaded and no file written."""
    if not (MODELS_DIR / MODEL / "tokenizer.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh)")

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(Engines, "load", no_load)
    data = pairwise_data(tmp_path, 9000)  # more words than SmolLM2's 8192-token context
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "task": "pairwise",
                "backend": "transformers",
                "context_policy": "fail",
                "models_dir": str(MODELS_DIR),
                "data": data,
                "agents": [{"role": "critic", "model": MODEL}],
            }
        )
    )
    result = CliRunner().invoke(app, ["run", str(config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert re.fullmatch(
        rf"error: {re.escape(str(data['path']))}: item 'long': its debate needs up to \d+ tokens but model "
        rf"'{MODEL}' holds 8192 \(context_policy: fail\); .*\n",
        result.output,
    )
    assert not (tmp_path / "out").exists()


def test_unfittable_discussion_is_a_clear_error(tmp_path: Path) -> None:
    backend = ScriptedBackend(MODEL, longest_talk, context_window=WINDOW)
    config = tiny_config(data=pairwise_data(tmp_path, 10), sampling={"discussion_max_tokens": 500})
    with pytest.raises(DataError, match="even with its answers cut"):
        run(config, tmp_path / "out", backends={MODEL: backend})
    assert backend.calls == []


def test_direct_context_keeps_its_last_turns(tmp_path: Path) -> None:
    turns = "\n".join(f"A: turn{i}" for i in range(600))
    record = {"id": "d1", "context": turns, "knowledge": "", "response": "Sure, turn599 it is."}
    data = {"format": "jsonl_direct", "path": str(write_items(tmp_path / "d.jsonl", [record]))}
    config = tiny_config(
        task="direct", data=data, dimensions=[{"name": "coherence", "description": "makes sense"}]
    )
    backend = ScriptedBackend(MODEL, lambda r: "coherence: 3\nEvidence: ok" if asks_for_scores(r) else "hm")
    backend.context_window = WINDOW
    run(config, tmp_path / "out", backends={MODEL: backend})
    prompt = prompt_text(backend.calls[0][0])
    assert "turn599" in prompt and "turn0 " not in prompt
    verdict = json.loads((tmp_path / "out/verdicts.jsonl").read_text())
    assert set(verdict["truncated"][MODEL]) == {"context"}
