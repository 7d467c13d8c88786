"""The backends' registry (chateval.core.backend_kinds) is the one list of backend names: the
run config and the model registry accept exactly its names, and every kind has a builder."""

import pytest

from chateval.core.backend_kinds import BACKEND_KINDS, backend_kind, run_backend_names
from chateval.core.model_spec import ModelSpec
from chateval.engines.factory import BUILDERS
from chateval.errors import ConfigError
from tests.support.helpers import tiny_config


def test_every_kind_has_a_builder_and_every_builder_a_kind() -> None:
    assert BUILDERS.names() == BACKEND_KINDS.names() == ["openai", "transformers", "vllm"]


def test_a_kinds_settings_are_its_run_config_section() -> None:
    config = tiny_config()
    for name in BACKEND_KINDS:
        kind = backend_kind(name)
        if kind.settings_section is None:
            assert kind.served and kind.settings is None  # its registry entry's server
        else:
            assert isinstance(getattr(config, kind.settings_section), kind.settings)  # type: ignore[arg-type]


def test_the_run_config_accepts_the_registrys_run_backends_only() -> None:
    assert run_backend_names() == ["transformers", "vllm"]
    for name in run_backend_names():
        assert tiny_config(backend=name).backend == name
    with pytest.raises(ConfigError, match="unknown run backend 'llamacpp'; known: transformers, vllm"):
        tiny_config(backend="llamacpp")
    with pytest.raises(ConfigError, match="names its server in its registry entry"):
        tiny_config(backend="openai")


def test_a_registry_entry_names_a_known_backend() -> None:
    with pytest.raises(ValueError, match="unknown backend 'llamacpp'; known: openai, transformers, vllm"):
        ModelSpec(path="x", backend="llamacpp")
    with pytest.raises(ValueError, match="backend: openai and a server: section go together"):
        ModelSpec(path="x", backend="openai")
    assert ModelSpec(path="x", backend="transformers").backend == "transformers"
