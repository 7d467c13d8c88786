"""The model registry: entries, chat template files, sources and their errors."""

from pathlib import Path

import pytest

from chateval.engines.models import ModelRegistry
from chateval.errors import ConfigError
from tests.support.helpers import MODELS_DIR


def write_registry(folder: Path, text: str) -> ModelRegistry:
    (folder / "registry.yaml").write_text(text)
    return ModelRegistry(folder)


def test_project_registry_has_both_models() -> None:
    registry = ModelRegistry(MODELS_DIR)
    assert {"smollm2-135m", "gemma3-270m"} <= set(registry.specs)
    gemma = registry.spec("gemma3-270m")
    assert gemma.source is not None and gemma.source.kind == "pypi_gguf_assemble"
    assert gemma.chat_template and "<start_of_turn>" in gemma.chat_template


def test_chat_template_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "t.jinja").write_text("{{ messages[0]['content'] }}")
    registry = write_registry(tmp_path, "m: {path: m, chat_template_file: t.jinja, backend: transformers}\n")
    assert registry.spec("m").chat_template == "{{ messages[0]['content'] }}"
    assert registry.spec("m").backend == "transformers"


def test_missing_chat_template_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model 'm', chat_template_file .*nope.jinja not found"):
        write_registry(tmp_path, "m: {path: m, chat_template_file: nope.jinja}\n")


def test_unknown_backend_in_registry(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model 'm', field 'backend'"):
        write_registry(tmp_path, "m: {path: m, backend: tgi}\n")


def test_unknown_model_lists_known(tmp_path: Path) -> None:
    registry = write_registry(tmp_path, "a: {path: a}\nb: {path: b}\n")
    with pytest.raises(
        ConfigError, match=r"unknown model 'c': not a name in .*registry.yaml \(known: a, b\)"
    ):
        registry.spec("c")


def test_assemble_source_needs_its_package(tmp_path: Path) -> None:
    registry = write_registry(
        tmp_path,
        "m: {path: m, source: {kind: pypi_gguf_assemble, package: no_such_pkg_xyz, file: m.gguf}}\n",
    )
    with pytest.raises(ConfigError, match="package 'no_such_pkg_xyz' is not installed"):
        registry.prepare("m")


def test_no_registry_is_needed_for_model_folders(tmp_path: Path) -> None:
    """A models_dir without registry.yaml (a GPU node with its own model folders): folders
    resolve, and a bare name says there is no registry to look it up in."""
    folder = tmp_path / "weights" / "my-model"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"max_position_embeddings": 2048}')
    (folder / "model.safetensors").write_bytes(b"")
    registry = ModelRegistry(tmp_path / "empty")
    assert not registry.found and registry.specs == {}
    assert registry.spec(str(folder)).path == folder.resolve()
    assert registry.spec(str(folder)).max_model_len == 2048
    with pytest.raises(
        ConfigError, match=r"unknown model 'my-model': not a name: no model registry at .*registry.yaml"
    ):
        registry.spec("my-model")


def test_a_session_outside_the_checkout_needs_no_registry(tmp_path: Path) -> None:
    """A config whose referee is a model folder, with models_dir where no registry is, opens
    its session (models checked, nothing loaded)."""
    from chateval.engines.factory import Engines
    from chateval.run.session import open_session
    from tests.support.helpers import tiny_config

    model = MODELS_DIR / "smollm2-135m"
    if not (model / "config.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh)")
    config = tiny_config(agents=[{"role": "critic", "model": str(model)}], models_dir=str(tmp_path))
    session = open_session(config)
    assert isinstance(session.engines, Engines) and not session.engines.registry.found
    assert session.models == [str(model)]


def test_kv_bytes_per_token_from_the_config(tmp_path: Path) -> None:
    from chateval.engines.models import kv_bytes_per_token

    (tmp_path / "config.json").write_text(
        '{"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64}'
    )
    # keys and values x 2 layers x 2 KV heads x head dim 64 / 4 x 2 bytes
    assert kv_bytes_per_token(tmp_path, "bfloat16") == 2 * 2 * 2 * 16 * 2
    assert kv_bytes_per_token(tmp_path, "float32") == 2 * 2 * 2 * 16 * 4
    (tmp_path / "config.json").write_text('{"model_type": "other"}')
    assert kv_bytes_per_token(tmp_path, "bfloat16") is None
