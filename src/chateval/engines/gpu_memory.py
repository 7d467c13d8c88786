"""What a GPU's memory leaves each vLLM engine for its KV cache, estimated before anything loads
(``chateval check``, on a GPU node or for a GPU size given).

vLLM starts an engine with ``gpu_memory_utilization`` x the GPU's total memory; from that it
takes the weights, then the activation peak and other memory it measures at start-up, and the
rest becomes the KV cache. The weights are known here (the safetensors' sizes in the runtime
dtype, split over tensor and pipeline ranks); the activation peak is not (it depends on the
batch vLLM profiles with), so the cache estimated here is an upper bound. Where even the bound
cannot hold one sequence of the model's context, vLLM would refuse to start.

The placement is the run's own: the configured mode, or ``auto`` resolved from the models'
estimated needs on an idle GPU of that size; co-resident engines split vLLM's default share.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from chateval.core.model_spec import on_gpu, runtime_dtype
from chateval.engines.factory import Engines
from chateval.engines.memory_needs import GIB, weights_gib
from chateval.engines.models import kv_bytes_per_token
from chateval.engines.placement import Placement, choose_placement, engine_memory_shares


@dataclass(frozen=True)
class EngineMemory:
    """One vLLM engine's part of a GPU: its share, its weights and the KV cache left (at most)."""

    model: str
    share: float  # of the GPU's total memory
    budget_gib: float
    weights_gib: float  # on each GPU of the engine
    cache_gib: float  # at most: vLLM also takes its measured activation peak from the budget
    tokens: int  # at most, in the KV cache
    context: int  # the model's max_model_len

    @property
    def fits_one_sequence(self) -> bool:
        """Whether even the upper bound holds one sequence of the model's whole context."""
        return self.tokens >= self.context


def this_gpu_gib() -> float | None:
    """Total memory of this machine's first CUDA GPU; None without one."""
    if not on_gpu():
        return None
    import torch

    return float(torch.cuda.mem_get_info()[1]) / GIB


def gpu_engine_memory(
    engines: Engines, models: Sequence[str], gpu_gib: float
) -> tuple[Placement, list[EngineMemory]]:
    """The placement a run would choose on an idle GPU of ``gpu_gib`` and what each local vLLM
    engine of it would get. ``models`` are the run's local models (none served elsewhere)."""
    from chateval.backends.vllm_backend import engine_args, memory_fraction, parallel_ranks

    config, registry = engines.config, engines.registry
    placement = choose_placement(
        config.placement.mode, {m: engines.need_gib(m, gpu=True) for m in models}, gpu_gib
    )
    shares = engine_memory_shares(config, placement, gpu=True)
    sized = []
    for model in models:
        if not engines.kind(model).preallocates:
            continue
        spec = registry.spec(model)
        folder = registry.resolve(model, prepare=False)
        args = engine_args(model, spec, config.vllm)
        share = memory_fraction(config.vllm, args, True, shares.get(model))
        ranks = parallel_ranks(args)
        dtype = runtime_dtype(spec.dtype, True)
        weights = weights_gib(folder, dtype) / ranks
        cache = max(share * gpu_gib - weights, 0.0)
        per_token = kv_bytes_per_token(folder, dtype)
        tokens = 0 if per_token is None else int(cache * GIB // (per_token / ranks))
        sized.append(EngineMemory(model, share, share * gpu_gib, weights, cache, tokens, spec.max_model_len))
    return placement, sized


def describe_engine_memory(engine: EngineMemory) -> str:
    """One line: the engine's share, weights and KV cache, and what the cache holds."""
    return (
        f"{engine.model}: {engine.share:.2f} of it = {engine.budget_gib:.1f} GiB; weights "
        f"{engine.weights_gib:.1f} GiB; KV cache at most {engine.cache_gib:.1f} GiB = "
        f"{engine.tokens:,} tokens, {engine.tokens / engine.context:.1f} sequences of its "
        f"{engine.context:,}-token context"
    )


def too_small(engine: EngineMemory, gpu_gib: float) -> str:
    """The problem line for an engine whose share cannot hold one sequence of its context."""
    return (
        f"model {engine.model!r}: on a {gpu_gib:g} GiB GPU its share ({engine.share:.2f} = "
        f"{engine.budget_gib:.1f} GiB) leaves at most {engine.tokens:,} KV-cache tokens after its "
        f"{engine.weights_gib:.1f} GiB of weights, fewer than its {engine.context:,}-token context: "
        "vLLM would refuse to start. Give it a larger share (placement.memory_fractions), run "
        "placement.mode: phased, add tensor_parallel_size, or lower max_model_len"
    )
