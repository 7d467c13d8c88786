"""The engines' own settings, as the run config's ``vllm`` and ``transformers`` sections hold them.

They live here, below the config, because the backends take them and must not import the run
config: a backend is given its engine's settings, never the whole run.
"""

from typing import Any

from pydantic import Field

from chateval.core.strict_model import StrictModel


class VllmSettings(StrictModel):
    """vLLM engine settings."""

    gpu_memory_utilization: float | None = Field(
        default=None,
        gt=0.0,
        le=1.0,
        description="Share of GPU memory (host memory on CPU builds); default 0.85 on a GPU, 0.3 on a CPU.",
    )
    enforce_eager: bool = Field(
        default=True, description="Skip torch.compile and CUDA graphs (faster start)."
    )
    max_num_seqs: int = Field(default=256, ge=1, description="Most sequences in one engine step.")
    cpu_kvcache_space_gib: int = Field(default=1, ge=1, description="CPU builds: KV cache size in GiB.")
    block_size: int | None = Field(
        default=None,
        ge=1,
        description="Tokens per KV-cache block (prefix-cache hits count whole blocks); default 32 on "
        "CPU builds (multiples of 32 only), vLLM's own on GPUs.",
    )
    engine_args: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="More vLLM engine arguments per model, over its registry entry's engine_args, "
        "e.g. {my-70b: {tensor_parallel_size: 4, quantization: fp8}}; checked against the "
        "installed vLLM's EngineArgs before anything loads.",
    )


class TransformersSettings(StrictModel):
    """transformers backend settings."""

    batch_size: int = Field(default=16, ge=1, description="Requests per generate call.")
    device: str | None = Field(default=None, description="cuda or cpu; default: cuda when available.")
    prefix_cache: bool = Field(
        default=True,
        description="Keep every request's KV cache and start later requests from the longest prefix "
        "they share with a kept one.",
    )
    kv_store_gib: float = Field(default=4.0, gt=0, description="Memory for the kept KV caches.")
