"""Helpers the tests share: the repository's folders, tiny run configs, scripted referees and
readers of what a run wrote. Fixtures are in tests/conftest.py."""

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from chateval.config.files import parse_config
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.settings import Scales, StatisticsSettings
from chateval.judging.assessment import FREE_TAIL
from chateval.offline import HUB_OFF, environment
from chateval.schema.verdicts import VerdictRecord

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "models"
CONFIGS_DIR = ROOT / "configs"
# The systems sample: one JSONL file per made-up system (configs/systems_quickstart.yaml).
SAMPLE_SYSTEMS = {
    s: str(CONFIGS_DIR / "samples" / "systems" / f"{s}.jsonl") for s in ("careful", "brief", "rambling")
}
SECOND_MODEL = "gemma3-270m"


def without_chateval_settings(home: Path) -> dict[str, str]:
    """This process's environment as a user's shell has it: none of the settings chateval
    gives its processes (offline.py), and ``home`` without vLLM's do_not_track file."""
    ours = set(environment()) | set(HUB_OFF)
    return {**{k: v for k, v in os.environ.items() if k not in ours}, "HOME": str(home)}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file a run wrote (verdicts.jsonl, transcripts.jsonl)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_close(a: object, b: object, tolerance: float = 2e-3, relative: float = 0.0, at: str = "$") -> None:
    """Equal JSON trees, floats within ``tolerance`` (absolute) or ``relative``; a failure names
    the path of the first value that differs (``at``: the path of ``a`` itself)."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=tolerance, rel=relative), f"{at}: {a!r} != {b!r}"
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{at}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_close(a[key], b[key], tolerance, relative, f"{at}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{at}: {len(a)} entries != {len(b)}"
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_close(x, y, tolerance, relative, f"{at}[{k}]")
    else:
        assert a == b, f"{at}: {a!r} != {b!r}"


def assert_same_statistics(computed: object, stored: object) -> None:
    """Statistics computed here equal to ``stored`` ones up to floating point: another machine's
    BLAS kernels (another CPU, another OPENBLAS_CORETYPE) move fitted values in their last digits,
    so floats agree to 1e-6 relative, or 1e-9 absolute near zero; everything else exactly."""
    assert_close(computed, stored, tolerance=1e-9, relative=1e-6)


def same_results(out: Path, reference: Path) -> None:
    """Two run folders with the same text byte for byte and the same verdicts, score
    probabilities to float noise (batches formed differently move logits in the last bits)."""
    assert (out / "transcripts.jsonl").read_bytes() == (reference / "transcripts.jsonl").read_bytes()
    assert_close(read_jsonl(out / "verdicts.jsonl"), read_jsonl(reference / "verdicts.jsonl"))


def prompt_text(request: GenerationRequest) -> str:
    """Everything the speaker of ``request`` is shown, as one text (any prompt layout)."""
    return "\n".join(m.content for m in request.messages)


def saw_discussion(request: GenerationRequest) -> bool:
    """Whether the speaker was shown any earlier utterance (in any prompt layout)."""
    # A referee's request ends with its own lead (an assistant message it continues): not history.
    history = request.messages[:-1] if request.messages[-1].role == "assistant" else request.messages
    text = prompt_text(request)
    headings = ("[Panel discussion so far]", "[The discussion so far]")
    return any(m.role == "assistant" for m in history) or any(h in text for h in headings)


# How every layout names the speaker in the request that asks it to talk ("You are Critic.",
# "You are now Critic, one of the referees ...").
_SPEAKER = re.compile(r"You are (?:now )?([A-Z][a-z]+(?: [A-Z][a-z]+)*(?: \d+)?)[.,]")


# How the summarizer's prompt begins (the same in every layout).
SUMMARIZER_ASKS = "Summarize the lines"


def speaker_of(request: GenerationRequest) -> str:
    """Who a request asks to speak (any layout): named in the last user message it was given."""
    asked = next(m for m in reversed(request.messages) if m.role == "user")
    if asked.content.startswith(SUMMARIZER_ASKS):
        return "Summarizer"
    name: str = _SPEAKER.findall(asked.content)[-1]
    return name


def asks_for_scores(request: GenerationRequest) -> bool:
    """Whether ``request`` asks for constrained score lines. An assessment's request carries a
    constraint too, but only on how its free text begins: it ends in a free tail."""
    return request.regex is not None and FREE_TAIL not in request.regex


def prompt_dependent(request: GenerationRequest) -> str:
    """A scripted referee whose every answer depends on its model and on everything its speaker
    was shown, so any mix-up (of batches, models, history or replayed steps) changes the output."""
    n = sum(map(ord, prompt_text(request)))
    if asks_for_scores(request):
        return f"Assistant 1: {n % 10 + 1}\nAssistant 2: {n % 7 + 1}\nEvidence: {request.model} n={n}"
    return f"{request.model} counts {n}."


def tiny_config(**overrides: object) -> RunConfig:
    """A small pairwise run over the quickstart samples (2 items, short talk)."""
    tree: dict[str, object] = {
        "name": "test",
        "task": "pairwise",
        "data": {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 2},
        "agents": [
            {"role": "critic", "model": DEFAULT_MODEL},
            {"role": "everyday_reader", "model": DEFAULT_MODEL},
        ],
        "strategy": "one_by_one",
        "models_dir": str(MODELS_DIR),
        "sampling": {"discussion_max_tokens": 12, "summary_max_tokens": 12},
        "verdict": {"evidence_max_tokens": 6, "reasoning_max_tokens": 12},
    }
    tree.update(overrides)
    return parse_config(tree, "test", CONFIGS_DIR)


def direct_responses_config(path: Path, rows: list[dict[str, object]]) -> RunConfig:
    """A direct run over responses ``rows`` (written to ``path`` as JSONL), scored on one
    dimension, fluency 1..3."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tiny_config(
        task="direct",
        position_calibration=False,
        dimensions=[{"name": "fluency", "description": "reads well", "low": 1, "high": 3}],
        data={"format": "jsonl_responses", "path": str(path)},
    )


def quickstart_config(**overrides: object) -> RunConfig:
    """The tiny run over all 12 quickstart samples."""
    data = {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl"}
    return tiny_config(data=data, **overrides)


def run_diagnostics(records: Sequence[VerdictRecord], scales: Scales | None = None) -> dict[str, Any]:
    """The panel's diagnostics over ``records`` as metrics.json keeps them (the registered
    panel measures: parroting, cut_off, empty_assessments and, given ``scales``, ceiling)."""
    from chateval.evaluation.diagnostics import panel_measures

    settings = StatisticsSettings(task="pairwise", scales=scales or {})
    measures = (panel_measures.PARROTING, panel_measures.CUT_OFF, panel_measures.EMPTY_ASSESSMENTS)
    found = {m.name: m.compute(settings, records) for m in measures}
    found["ceiling"] = panel_measures.CEILING.compute(settings, records) if scales is not None else None
    return found


def export_stdout(*args: str | Path) -> str:
    """``chateval export ARGS...`` through the CLI, which must succeed: its stdout."""
    from typer.testing import CliRunner

    from chateval.cli import app

    result = CliRunner().invoke(app, ["export", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.stdout
