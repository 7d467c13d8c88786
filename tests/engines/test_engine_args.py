"""vLLM engine arguments per model: passed through, and refused up front when vLLM would refuse them.

Every refusal happens before the run writes its folder or loads a model.
"""

from pathlib import Path

import pytest

from chateval.backends.vllm_backend import _core_lists
from chateval.engines.factory import Engines
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from chateval.errors import ConfigError
from chateval.run.runner import run
from tests.support.helpers import MODELS_DIR, tiny_config

pytest.importorskip("vllm")


def refused(tmp_path: Path, engine_args: dict[str, dict[str, object]], match: str) -> None:
    config = tiny_config(backend="vllm", vllm={"engine_args": engine_args})
    with pytest.raises(ConfigError, match=match):
        run(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before the run folder exists


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_an_unknown_engine_argument_is_refused_listing_the_known_ones(tmp_path: Path) -> None:
    refused(
        tmp_path,
        {DEFAULT_MODEL: {"tensor_paralel_size": 2}},
        r"model 'smollm2-135m': unknown vLLM engine argument\(s\) tensor_paralel_size; vLLM [\d.]+\S* "
        r"takes: .*\btensor_parallel_size\b",
    )


def test_an_argument_chateval_sets_is_refused_with_where_to_set_it(tmp_path: Path) -> None:
    refused(tmp_path, {DEFAULT_MODEL: {"max_model_len": 512}}, "'max_model_len' is set by the registry entry")


def test_more_parallel_ranks_than_devices_are_refused(tmp_path: Path) -> None:
    refused(
        tmp_path,
        {DEFAULT_MODEL: {"tensor_parallel_size": 64, "pipeline_parallel_size": 2}},
        r"tensor_parallel_size x pipeline_parallel_size = 128, but only \d+ ",
    )


def test_engine_arguments_for_a_model_no_agent_uses_are_refused(tmp_path: Path) -> None:
    refused(
        tmp_path,
        {"llama-70b": {"quantization": "fp8"}},
        r"vllm.engine_args: no agent uses model\(s\) llama-70b",
    )


def test_registry_entries_carry_engine_arguments_and_placement_splits_the_weights(tmp_path: Path) -> None:
    (tmp_path / "registry.yaml").write_text(
        f"big: {{path: {MODELS_DIR / DEFAULT_MODEL}, engine_args: {{tensor_parallel_size: 2}}}}\n"
        f"small: {{path: {MODELS_DIR / DEFAULT_MODEL}}}\n"
    )
    registry = ModelRegistry(tmp_path)
    assert registry.spec("big").engine_args == {"tensor_parallel_size": 2}
    config = tiny_config(backend="vllm")
    cache = config.vllm.cpu_kvcache_space_gib
    split, whole = (Engines(config, registry).need_gib(m, gpu=False) - cache for m in ("big", "small"))
    assert split == pytest.approx(whole / 2)
    # The run config's arguments for a model go over its entry's.
    more = tiny_config(backend="vllm", vllm={"engine_args": {"big": {"tensor_parallel_size": 1}}})
    assert Engines(more, registry).need_gib("big", gpu=False) - cache == pytest.approx(whole)


def test_a_tensor_parallel_size_that_does_not_divide_the_heads_is_refused(
    registry: ModelRegistry, tmp_path: Path
) -> None:
    # SmolLM2-135M has 9 attention heads: vLLM would refuse 2 ranks only after starting them.
    refused(tmp_path, {DEFAULT_MODEL: {"tensor_parallel_size": 2}}, "does not divide its 9 attention heads")


def test_parallel_ranks_get_cores_of_their_own() -> None:
    assert [_core_lists(2, 1), _core_lists(2, 2), _core_lists(8, 2), _core_lists(3, 2)] == [
        "0-1",
        "0|1",
        "0-3|4-7",
        "0|1",
    ]
