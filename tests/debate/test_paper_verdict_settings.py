"""The 2023 code's verdict as settings. Its one reply per verdict turn: with
``verdict.shared_budget`` a referee's scores get what its assessment left of the assessment's
budget, so an assessment that used it all leaves no room for the scores, and (``on_failure:
tie``) its item counts as a tie. Its parse of numbers: ``verdict.half_points``."""

import json
import re
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.core.backend import GenerationRequest
from chateval.core.items import PairwiseItem
from chateval.debate.building import load_run_items
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, prompt_text, speaker_of, tiny_config

BUDGET = 12


def referee(request: GenerationRequest) -> str:
    """The Critic's assessment fills its budget; the Everyday Reader's takes 3 tokens. Scores
    prefer the longer answer (in either order) and are cut to the request's budget (4
    whitespace tokens, as the scripted backend counts, finish them), as an engine cuts them."""
    if asks_for_scores(request):
        first, second = (
            len(a) for a in re.findall(r"(?m)^\[Assistant \d's answer\]\n(.*)", prompt_text(request))
        )
        scores = f"\nAssistant 1: {8 if first > second else 3}\nAssistant 2: {3 if first > second else 8}"
        return " ".join(scores.split(" ")[: request.max_tokens]) if request.max_tokens < 4 else scores
    if request.regex is not None:  # the assessment (its constraint only holds how it opens)
        words = BUDGET if speaker_of(request) == "Critic" else 3
        return " ".join(["fine"] * words)
    return "Some thoughts."


def judged(tmp_path: Path, **verdict: object) -> tuple[list[GenerationRequest], list[str | None]]:
    backend = ScriptedBackend(DEFAULT_MODEL, referee)
    config = tiny_config(verdict={"reasoning_max_tokens": BUDGET, "evidence_max_tokens": 6, **verdict})
    result = run(config, tmp_path, backends={DEFAULT_MODEL: backend})
    scores = [r for call in backend.calls for r in call if asks_for_scores(r)]
    labels = [
        json.loads(line)["label"] for line in (result.outdir / "verdicts.jsonl").read_text().splitlines()
    ]
    return scores, labels


def test_the_scores_get_what_the_assessment_left(tmp_path: Path) -> None:
    longer = [
        "A" if len(i.answer_a) > len(i.answer_b) else "B"
        for i in load_run_items(tiny_config())
        if isinstance(i, PairwiseItem)
    ]
    scores, labels = judged(tmp_path / "shared", shared_budget=True, on_failure="tie")
    budgets = {speaker_of(r): r.max_tokens for r in scores}
    assert budgets["Critic"] == 1  # its assessment used all 12: one token, which cannot finish
    assert budgets["Everyday Reader"] == BUDGET - 3
    assert labels == ["tie", "tie"]  # the Critic's verdict failed in every debate
    # The Critic left out instead (the default rule): the Everyday Reader's scores decide.
    _, dropped = judged(tmp_path / "dropped", shared_budget=True)
    assert dropped == longer
    # Budgets of their own (the default): every verdict parses, both referees decide.
    own_scores, own_labels = judged(tmp_path / "own")
    assert {r.max_tokens for r in own_scores} == {own_scores[0].max_tokens} and own_scores[0].max_tokens > 4
    assert own_labels == longer


def test_a_shared_budget_needs_reasoning_and_a_tie_rule_needs_pairs() -> None:
    with pytest.raises(ConfigError, match="shared_budget needs reasoning"):
        tiny_config(verdict={"reasoning": False, "shared_budget": True})
    direct = {
        "task": "direct",
        "dimensions": [{"name": "coherence", "description": "makes sense"}],
        "data": {"format": "jsonl_direct", "path": "samples/quickstart_direct.jsonl"},
    }
    with pytest.raises(ConfigError, match="on_failure: tie is a pairwise rule"):
        tiny_config(verdict={"on_failure": "tie"}, **direct)


def test_a_run_with_half_points_records_and_reports_them(tmp_path: Path) -> None:
    """The 2023 parse end to end: half-point scores reach verdicts.jsonl as written, decide
    the label, and the report (its pictures included) reads them."""
    from typer.testing import CliRunner

    from chateval.cli import app

    def referee(request: GenerationRequest) -> str:
        return "\nAssistant 1: 7.5\nAssistant 2: 7" if asks_for_scores(request) else "Some thoughts."

    config = tiny_config(verdict={"half_points": True, "soft": False, "reasoning_max_tokens": 8})
    run(config, tmp_path / "run", backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, referee)})
    records = [json.loads(line) for line in (tmp_path / "run" / "verdicts.jsonl").read_text().splitlines()]
    first = records[0]["orders"][0]["referees"][0]
    assert (first["score_a"], first["score_b"]) == (7.5, 7)
    # Both orders prefer the answer shown first by half a point: summed, a tie.
    assert [r["label"] for r in records] == ["tie", "tie"] and records[0]["score_a"] == 29.0
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "-o", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
