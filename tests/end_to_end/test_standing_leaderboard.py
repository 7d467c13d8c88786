"""A standing leaderboard on the real default model: a system added, judged through the judgment
store, gives a run of the whole from scratch's transcripts word for word and its figures to
float noise; a prompt added after it sends only its own comparisons; the engine sees only the
new comparisons' requests. (tests/run/test_judgment_store_runs.py proves the same, exactly, and
every miss and hit of the store, on the scripted referee.)"""

import json
from pathlib import Path
from typing import Any

import pytest

from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import RunResult, run
from tests.support.helpers import SAMPLE_SYSTEMS, assert_close, read_jsonl, tiny_config

pytestmark = pytest.mark.slow

# A fourth system, in the sample's prompts' words: it answers every question with a question.
_CURIOUS = {
    "p1": "Have you noticed that bread kept cold turns firm and dry within a day or two?",
    "p2": "Would it help to multiply sixty by twenty-four, and then by seven?",
}


def _systems(folder: Path, systems: list[str], prompts: int) -> dict[str, str]:
    """The sample's systems (and ``curious``) answering their first ``prompts`` prompts, one
    file per system in ``folder``."""
    folder.mkdir(exist_ok=True)
    files = {}
    for system in systems:
        if system == "curious":
            rows = [
                {"prompt": p, "question": _question(p), "response": r}
                for p, r in list(_CURIOUS.items())[:prompts]
            ]
        else:
            rows = read_jsonl(Path(SAMPLE_SYSTEMS[system]))[:prompts]
        path = folder / f"{system}-{prompts}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        files[system] = str(path)
    return files


def _question(prompt: str) -> str:
    return next(r["question"] for r in read_jsonl(Path(SAMPLE_SYSTEMS["careful"])) if r["prompt"] == prompt)


def _judge(backend: Backend, files: dict[str, str], out: Path, cache: Path | bool) -> RunResult:
    # One referee, one round: two requests a debate (its assessment, then its scores).
    config = tiny_config(
        backend="transformers",
        rounds=1,
        agents=[{"role": "critic", "model": DEFAULT_MODEL}],
        data={"format": "jsonl_responses", "path": files},
    )
    return run(config, out, backends={DEFAULT_MODEL: backend}, cache=cache)


def _transcripts(folder: Path) -> dict[str, dict[str, Any]]:
    return {t["key"]: t for t in read_jsonl(folder / "transcripts.jsonl")}


def _requests_of(transcripts: list[dict[str, Any]]) -> int:
    """The engine requests that said these transcripts: one per utterance."""
    return sum(len(t["messages"]) for t in transcripts)


def items_of(folder: Path) -> dict[str, dict[str, Any]]:
    return {i["id"]: i for i in read_jsonl(folder / "items.jsonl")}


def _metrics(result: RunResult) -> Any:
    return json.loads((result.outdir / "metrics.json").read_text())


def test_a_system_then_a_prompt_added_judge_only_what_is_new(
    transformers_backend: Backend, tmp_path: Path
) -> None:
    store, data = tmp_path / "store", tmp_path / "data"
    three = ["careful", "brief", "rambling"]
    first = _judge(transformers_backend, _systems(data, three, 1), tmp_path / "three", store)
    assert first.run_info["judgment_store"]["reused"] == 0

    # A fourth system: only the comparisons with it reach the engine.
    added = _judge(transformers_backend, _systems(data, [*three, "curious"], 1), tmp_path / "four", store)
    before, now = _transcripts(tmp_path / "three"), _transcripts(tmp_path / "four")
    items = items_of(tmp_path / "four")
    judged = [t for t in now.values() if "reused" not in t]
    assert all(
        "curious" in (items[t["item_id"]]["system_a"], items[t["item_id"]]["system_b"]) for t in judged
    )
    assert len(judged) == len(now) - len(before) == 6  # 3 new pairs x 2 orders
    assert added.run_info["requests"] == _requests_of(judged)
    assert added.run_info["judgment_store"] == {**added.run_info["judgment_store"], "reused": 6, "judged": 6}
    for key, old in before.items():  # the reused debates are the first run's, word for word
        assert now[key]["messages"] == old["messages"]
        assert now[key]["reused"]["judged_in"] == str((tmp_path / "three").resolve())

    # Every figure equals a run of the whole from scratch (no store): the same transcripts, the
    # same verdicts and statistics.
    scratch = _judge(
        transformers_backend, _systems(data, [*three, "curious"], 1), tmp_path / "scratch", False
    )
    assert "judgment_store" not in scratch.run_info
    assert {k: t["messages"] for k, t in now.items()} == {
        k: t["messages"] for k, t in _transcripts(scratch.outdir).items()
    }
    # Score probabilities from kept KV caches and from recomputed ones agree to float noise.
    assert_close(_metrics(added), _metrics(scratch))
    assert_close(read_jsonl(added.outdir / "verdicts.jsonl"), read_jsonl(scratch.outdir / "verdicts.jsonl"))

    # A second prompt: only its comparisons reach the engine, and the rest is the first runs'
    # word for word (tests/run/test_judgment_store_runs.py compares such a run's figures with a
    # run from scratch, on the scripted referee).
    grown = _judge(transformers_backend, _systems(data, [*three, "curious"], 2), tmp_path / "grown", store)
    assert (
        grown.run_info["judgment_store"]["reused"] == 12 and grown.run_info["judgment_store"]["judged"] == 12
    )
    after = _transcripts(tmp_path / "grown")
    judged_now = [t for t in after.values() if "reused" not in t]
    assert grown.run_info["requests"] == _requests_of(judged_now)
    assert all(items_of(tmp_path / "grown")[t["item_id"]]["prompt"] == "p2" for t in judged_now)
    assert all(after[k]["messages"] == t["messages"] for k, t in now.items())
