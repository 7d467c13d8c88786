"""Runs with the adaptive design: a scripted panel that knows each system's planted quality
ranks them in that order within the budget or stops once the ranking is resolved; streaming
and step barriers choose the same waves; a run killed at any point resumes to the same choices
and the same outputs."""

import json
import logging
import re
import zlib
from pathlib import Path
from typing import cast

import pytest

from chateval.backends.scripted import Responder, ScriptedBackend, StreamingScriptedBackend
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import BackendError
from chateval.record.journal import load
from chateval.run.runner import RunResult, run
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import (
    SAMPLE_SYSTEMS,
    asks_for_scores,
    prompt_dependent,
    prompt_text,
    read_jsonl,
    tiny_config,
)
from tests.support.scripted import DiesAtCall, DiesAtPoll

OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")
_ANSWER = re.compile(r"an answer of quality (\d+) to prompt (\d+)")


def planted_data(path: Path, quality: dict[str, int], prompts: int) -> Path:
    """Responses of systems whose answers state their planted quality (1..9)."""
    rows = [
        {
            "prompt": f"p{p}",
            "question": f"Question {p}?",
            "system": system,
            "response": f"an answer of quality {q} to prompt {p}",
        }
        for p in range(prompts)
        for system, q in quality.items()
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def planted_referee(request: GenerationRequest) -> str:
    """Scores each answer shown by its planted quality plus -3..3 of noise fixed per answer,
    so the better system usually wins and sometimes ties or loses, in either answer order."""
    if not asks_for_scores(request):
        return "Some thoughts."
    scores = [
        min(10, max(1, int(q) + zlib.crc32(f"{q}:{p}".encode()) % 7 - 3))
        for q, p in _ANSWER.findall(prompt_text(request))[:2]
    ]
    return f"Assistant 1: {scores[0]}\nAssistant 2: {scores[1]}\nEvidence: planted"


def adaptive_config(data: Path, scheduling: str = "barrier", **adaptive: object) -> RunConfig:
    """One referee over the planted data, waves of 6 unless ``adaptive`` says otherwise."""
    design = {"wave": 6, **adaptive}
    return tiny_config(
        data={"format": "jsonl_responses", "path": str(data), "compare": {"adaptive": design}},
        agents=[{"role": "critic"}],
        scheduling=scheduling,
    )


def adaptive_run(
    config: RunConfig, out: Path, streaming: bool = False, referee: Responder = planted_referee
) -> RunResult:
    kind = StreamingScriptedBackend if streaming else ScriptedBackend
    return run(config, out, backends={DEFAULT_MODEL: kind(DEFAULT_MODEL, referee)})


def ranking(result: RunResult) -> list[str]:
    assert result.metrics is not None
    board = result.metrics["systems"]["leaderboard"]
    return [row["system"] for row in sorted(board["rows"], key=lambda row: -row["rating"])]


def choices(out: Path) -> tuple[list[list[str]], str | None]:
    state = load(out / "journal.jsonl")
    return state.waves, state.stop


@pytest.fixture(scope="module")
def three_systems(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 systems of quality 8, 5 and 2 on 40 prompts: 120 candidate comparisons (enough for the
    stop's share of the error at each look to tell them apart before the last)."""
    folder = tmp_path_factory.mktemp("three_systems")
    return planted_data(folder / "answers.jsonl", {"good": 8, "fair": 5, "poor": 2}, 40)


@pytest.fixture(scope="module")
def resolved(three_systems: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("resolved")
    adaptive_run(adaptive_config(three_systems, budget=120, wave=12), out)
    return out


def test_a_resolved_ranking_stops_the_run_before_the_budget(resolved: Path) -> None:
    info = json.loads((resolved / "run.json").read_text())
    adaptive = info["adaptive"]
    assert adaptive["stop"] == "resolved"
    assert adaptive["candidates"] == 120 and adaptive["budget"] == 120 and adaptive["wave"] == 12
    assert 6 <= adaptive["chosen"] < 120
    waves, stop = choices(resolved)
    assert stop == "resolved" and len(waves) == adaptive["waves"]
    assert [len(w) for w in waves[:2]] == [3, 3]  # each seeded wave: one cycle through 3 systems
    chosen = [key for wave in waves for key in wave]
    records = read_jsonl(resolved / "verdicts.jsonl")
    # verdicts.jsonl holds the chosen items only, wave by wave; each debated in both orders.
    assert [r["item_id"] for r in records] == chosen == list(dict.fromkeys(chosen))
    assert info["items"] == len(records) and info["debates"] == 2 * len(records)
    metrics = json.loads((resolved / "metrics.json").read_text())
    board = metrics["systems"]["leaderboard"]
    assert [row["system"] for row in sorted(board["rows"], key=lambda row: -row["rating"])] == [
        "good",
        "fair",
        "poor",
    ]
    # Prompts stay balanced: no prompt holds two comparisons before every one holds one.
    prompts = [key.split(":")[0] for key in chosen]
    assert len(set(prompts[:30])) == min(30, len(prompts))


def test_the_summary_and_reports_say_what_the_design_chose(
    resolved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chateval.reporting.html import write_html_report
    from chateval.reporting.markdown import write_report
    from chateval.reporting.summary import print_summary

    info = json.loads((resolved / "run.json").read_text())
    metrics = json.loads((resolved / "metrics.json").read_text())
    print_summary(RunResult(resolved, info, metrics))
    adaptive = info["adaptive"]
    line = (
        f"adaptive design: {adaptive['chosen']} of 120 candidate comparisons in {adaptive['waves']} waves; "
        "stopped: resolved"
    )
    assert line in capsys.readouterr().out
    assert line in write_report([resolved], tmp_path).read_text()
    assert line in write_html_report([resolved], tmp_path / "html").read_text()


def test_the_final_board_of_an_adaptive_run_says_resolved_only_within_the_split(
    resolved: Path, tmp_path: Path
) -> None:
    """The final leaderboards (plain and length-controlled) list their resolved pairs at the
    final look's share of the design's 5% (adaptive_design.LOOK_ALPHA), not at a plain 95%,
    and the reports say so; recomputed from the run's own verdicts, the pairs are those told
    apart at that share."""
    from chateval.evaluation.systems.adaptive_design import LOOK_ALPHA
    from chateval.evaluation.systems.leaderboard import fit_board
    from chateval.evaluation.systems.section import decided_comparison
    from chateval.reporting.markdown import write_report

    systems = json.loads((resolved / "metrics.json").read_text())["systems"]
    board = systems["leaderboard"]
    assert board["resolved_alpha"] == pytest.approx(LOOK_ALPHA)
    assert systems["length_controlled"]["resolved_alpha"] == pytest.approx(LOOK_ALPHA)
    records = cast(list[VerdictRecord], read_jsonl(resolved / "verdicts.jsonl"))
    comparisons = [c for r in records if (c := decided_comparison(r))]
    fitted = fit_board(comparisons, [row["system"] for row in board["rows"]])
    names = list(fitted.arrays.systems)
    theta = fitted.log_strengths()
    told = [
        [a, b]
        for a in names
        for b in names
        if theta[names.index(a)] > theta[names.index(b)]
        and fitted.told_apart(names.index(a), names.index(b), 3, LOOK_ALPHA)
    ]
    assert board["resolved"] and sorted(board["resolved"]) == sorted(told)
    rule = "all 3 pairs' intervals holding at once, 98.75% jointly (Bonferroni; 5% split over the adaptive"
    report = write_report([resolved], tmp_path).read_text()
    assert rule in report
    assert "no plain rating difference resolved, 98.75% jointly" in report  # the picture's letters


def test_the_budget_ends_a_run_the_budget_cannot_resolve(tmp_path: Path) -> None:
    data = planted_data(tmp_path / "answers.jsonl", {"s1": 9, "s2": 6, "s3": 3, "s4": 1}, 8)
    result = adaptive_run(adaptive_config(data, budget=20), tmp_path / "out")
    adaptive = result.run_info["adaptive"]
    assert adaptive == {
        "budget": 20,
        "wave": 6,
        "top_k": None,
        "candidates": 48,
        "chosen": 20,
        "waves": adaptive["waves"],
        "stop": "budget spent",
    }
    # Seeded waves of 4 (a cycle through 4 systems), then 6, 6, and the 0 the budget leaves.
    assert [len(w) for w in choices(tmp_path / "out")[0]] == [4, 4, 6, 6]
    # 20 comparisons order the clear gaps; s3 and s4 (qualities 3 and 1, noise of +-3) split
    # their few meetings, and the intervals say the order of those two is not known.
    assert ranking(result)[:2] == ["s1", "s2"]


def test_top_k_stops_once_the_best_are_told_apart(tmp_path: Path) -> None:
    data = planted_data(tmp_path / "answers.jsonl", {"s1": 8, "s2": 5, "s3": 4, "s4": 2}, 40)
    result = adaptive_run(adaptive_config(data, budget=240, top_k=1), tmp_path / "out")
    adaptive = result.run_info["adaptive"]
    assert adaptive["stop"] == "top-k resolved" and adaptive["top_k"] == 1 and adaptive["chosen"] < 240
    assert ranking(result)[0] == "s1"


def test_a_budget_above_the_candidates_is_cut_to_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The systems sample: 3 systems x 4 prompts, 12 candidates."""
    config = tiny_config(
        data={"format": "jsonl_responses", "path": SAMPLE_SYSTEMS, "compare": {"adaptive": {"budget": 50}}},
        agents=[{"role": "critic"}],
        scheduling="barrier",
    )
    with caplog.at_level(logging.WARNING):
        result = adaptive_run(config, tmp_path, referee=prompt_dependent)
    assert "budget: 50 is more than the 12 candidate comparisons" in caplog.text
    adaptive = result.run_info["adaptive"]
    assert (adaptive["budget"], adaptive["candidates"], adaptive["wave"]) == (12, 12, 16)
    # The prompt-dependent referee never resolves the ranking: every candidate is taken, and
    # that is the reason given (not the budget, cut to the candidates).
    assert adaptive["stop"] == "every candidate compared" and adaptive["chosen"] == 12


def test_streaming_chooses_what_step_barriers_choose(
    three_systems: Path, resolved: Path, tmp_path: Path
) -> None:
    result = adaptive_run(
        adaptive_config(three_systems, "auto", budget=120, wave=12), tmp_path, streaming=True
    )
    assert result.run_info["scheduling"] == "streaming"
    assert choices(tmp_path) == choices(resolved)
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (resolved / name).read_bytes(), name
    assert result.run_info["adaptive"] == json.loads((resolved / "run.json").read_text())["adaptive"]


@pytest.mark.parametrize(
    ("scheduling", "fail_at"),
    [("barrier", 2), ("barrier", 5), ("auto", 60)],
)
def test_a_killed_run_resumes_to_the_same_choices_and_outputs(
    three_systems: Path, resolved: Path, tmp_path: Path, scheduling: str, fail_at: int
) -> None:
    config = adaptive_config(three_systems, scheduling, budget=120, wave=12)
    streaming = scheduling == "auto"
    kind = DiesAtPoll if streaming else DiesAtCall
    failing = kind(DEFAULT_MODEL, planted_referee, fail_at)
    with pytest.raises(BackendError):
        run(config, tmp_path, backends={DEFAULT_MODEL: failing})
    assert not (tmp_path / "run.json").exists()
    # Killed mid-run: some waves chosen, no stop yet.
    waves, stop = choices(tmp_path)
    assert len(waves) >= 2 and stop is None
    result = adaptive_run(config, tmp_path, streaming)
    assert result.run_info["resumed"] is True
    assert choices(tmp_path) == choices(resolved)
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (resolved / name).read_bytes(), name
    assert result.run_info["adaptive"] == json.loads((resolved / "run.json").read_text())["adaptive"]
