"""Models named directly: a local folder, a hub id in the local Hugging Face cache, or nothing known.

The folders link to the default model's real files, so the tokenizer loaded through a direct
reference is the real one. Nothing here touches the network: the cache is built in a temp dir.
"""

import json
from pathlib import Path

import pytest

from chateval.config.files import parse_config
from chateval.engines.factory import TokenizerOnly
from chateval.engines.models import DEFAULT_MODEL, DIRECT_CONTEXT_CAP, ModelRegistry
from chateval.errors import ConfigError
from chateval.run.runner import run
from tests.support.helpers import MODELS_DIR, tiny_config

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def model_files(registry: ModelRegistry) -> list[Path]:
    return sorted(registry.resolve(DEFAULT_MODEL).iterdir())


def linked_folder(registry: ModelRegistry, folder: Path) -> Path:
    """A folder holding links to the default model's files (as a user's own copy would)."""
    folder.mkdir(parents=True)
    for file in model_files(registry):
        (folder / file.name).symlink_to(file)
    return folder


def fake_hub_cache(registry: ModelRegistry, cache: Path, repo_id: str) -> Path:
    """The layout huggingface_hub writes: refs/main names a snapshot of links into blobs."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    return linked_folder(registry, repo / "snapshots" / COMMIT)


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_a_model_folder_by_path_gets_its_own_context_length(registry: ModelRegistry, tmp_path: Path) -> None:
    folder = linked_folder(registry, tmp_path / "my-model")
    spec = registry.spec(str(folder))
    own = json.loads((folder / "config.json").read_text())["max_position_embeddings"]
    assert spec.path == folder and spec.dtype == "auto" and spec.source is None
    assert spec.max_model_len == min(own, DIRECT_CONTEXT_CAP)
    counter = TokenizerOnly(str(folder), registry)
    assert counter.count_tokens("Assistant 1: 7") == TokenizerOnly(DEFAULT_MODEL, registry).count_tokens(
        "Assistant 1: 7"
    )


def test_relative_model_paths_are_taken_from_the_config_folder(
    registry: ModelRegistry, tmp_path: Path
) -> None:
    linked_folder(registry, tmp_path / "weights" / "mine")
    tree = {
        "task": "pairwise",
        "data": {"format": "jsonl_pairwise", "path": "data.jsonl"},
        "agents": [{"role": "critic", "model": "./weights/mine"}],
        "models_dir": str(MODELS_DIR),
    }
    parsed = parse_config(tree, "test", tmp_path)
    assert parsed.agents[0].model == str(tmp_path / "weights" / "mine")
    assert registry.spec(parsed.agents[0].model).path == tmp_path / "weights" / "mine"


def test_a_hub_id_resolves_from_the_local_cache_only(
    registry: ModelRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "hub"
    snapshot = fake_hub_cache(registry, cache, "HuggingFaceTB/SmolLM2-135M-Instruct")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = ModelRegistry(MODELS_DIR).spec("HuggingFaceTB/SmolLM2-135M-Instruct")
    assert Path(spec.path) == snapshot


def test_an_unknown_reference_says_everything_that_was_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    registry = ModelRegistry(MODELS_DIR)
    with pytest.raises(ConfigError) as caught:
        registry.spec("acme/llama-9b")
    message = str(caught.value)
    assert message.startswith("unknown model 'acme/llama-9b': not a name in ")
    assert "smollm2-135m" in message and "does not exist" in message
    assert f"not in the local Hugging Face cache ({tmp_path / 'empty-cache'} holds no snapshot" in message
    assert "never downloads" in message
    with pytest.raises(ConfigError, match="not a hub id"):
        registry.spec("gpt-17")


def test_a_folder_without_weights_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="holds no config.json and safetensors weights"):
        ModelRegistry(MODELS_DIR).spec(str(tmp_path))


def test_a_model_path_that_is_a_file_says_so(tmp_path: Path) -> None:
    """A weights file (or a GGUF) named instead of its folder: not "does not exist"."""
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(ConfigError) as caught:
        ModelRegistry(MODELS_DIR).spec(str(weights))
    assert str(caught.value) == (
        f"model '{weights}' is a file, not a model folder; name the Hugging Face folder that holds "
        "config.json, the *.safetensors weights and the tokenizer files"
    )


def test_a_registry_path_that_is_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "registry.yaml").write_text("mine: {path: weights.gguf}\n")
    (tmp_path / "weights.gguf").write_bytes(b"GGUF")
    registry = ModelRegistry(tmp_path)
    with pytest.raises(ConfigError) as caught:
        registry.resolve("mine")
    assert str(caught.value) == (
        f"{tmp_path / 'registry.yaml'}: model 'mine' ({tmp_path / 'weights.gguf'}) is a file, not a model "
        "folder; name the Hugging Face folder that holds config.json, the *.safetensors weights and the "
        "tokenizer files"
    )


def test_a_model_file_in_a_config_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from chateval.cli import app

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    config = tmp_path / "config.yaml"
    samples = MODELS_DIR.parent / "configs" / "samples" / "quickstart_pairwise.jsonl"
    config.write_text(
        f"task: pairwise\ndata: {{format: jsonl_pairwise, path: {samples}}}\n"
        f"agents: [{{role: critic, model: {weights}}}]\nmodels_dir: {MODELS_DIR}\n"
    )
    result = CliRunner().invoke(app, ["run", str(config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: model '{weights}' is a file, not a model folder; name ")
    assert result.output.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_direct_reference_does_not_become_a_registry_entry(registry: ModelRegistry) -> None:
    folder = str(registry.resolve(DEFAULT_MODEL))
    registry.spec(folder)
    assert folder not in registry.specs  # `chateval models list` shows the registry only


@pytest.mark.slow
def test_a_debate_runs_on_a_model_named_by_its_folder(registry: ModelRegistry, tmp_path: Path) -> None:
    """No registry entry: the transformers backend loads the folder, verdicts parse."""
    folder = str(linked_folder(registry, tmp_path / "mine"))
    config = tiny_config(
        backend="transformers",
        agents=[{"role": "critic", "model": folder}],
        rounds=1,
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
    )
    result = run(config, tmp_path / "out")
    assert result.run_info["verdict_parse_failures"] == 0
    assert list(result.run_info["per_model"]) == [folder]
    assert result.run_info["requests"] == 4  # one referee, both orders, assessment then scores
