"""What a model takes once loaded, estimated before it loads: the memory placement chooses from.

The weights are measured (their safetensors' size, scaled to the dtype they run in); what an
engine adds on top of them cannot be, before it starts: it is a margin, named here with where
each number comes from. The estimates allocate nothing themselves: they say whether a panel's
models fit the device together (``placement.choose_placement``) and, in proportion, how
co-resident vLLM engines split vLLM's share of a GPU (``placement.memory_shares``).
"""

import json
from pathlib import Path

GIB = 2**30
_BYTES_PER_PARAM = {"float32": 4, "bfloat16": 2, "float16": 2}

# Where these margins come from: they were written with placement itself (commit 85c8bc8,
# "Placement of a panel's models"), as rules of thumb; neither that commit nor any later one,
# docs/performance.md included, records a measurement behind them. Each errs towards more
# memory than the weights alone, so ``auto`` would rather phase a panel than overfill a device.
#
# A preallocating engine (vLLM): its weights times this, for what the engine holds beside them.
PREALLOCATING_WEIGHTS_FACTOR = 1.2
# The KV cache counted for a preallocating engine on a GPU, where vLLM sizes the cache from the
# share it is given at start-up and no estimate can know it beforehand: a nominal 1 GiB. (On a
# CPU the cache is a setting, vllm.cpu_kvcache_space_gib, and that is what is counted.)
GPU_KV_CACHE_GIB = 1.0
# A model in this process (transformers): its weights times this, for what the framework holds
# beside them, plus this much for the activations of a batch.
IN_PROCESS_WEIGHTS_FACTOR = 1.3
BATCH_ACTIVATIONS_GIB = 0.25


def weights_gib(folder: Path, runtime_dtype: str) -> float:
    """Memory of a model folder's weights once loaded in ``runtime_dtype``.

    The safetensors size is scaled from the dtype the folder stores to the one it runs in
    (the default model is stored in bfloat16 and runs in float32 on CPUs).
    """
    stored_bytes = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    stored_dtype = "bfloat16"
    config_file = folder / "config.json"
    if config_file.is_file():
        config = json.loads(config_file.read_text(encoding="utf-8"))
        stored_dtype = str(config.get("dtype") or config.get("torch_dtype") or stored_dtype)
    scale = _BYTES_PER_PARAM.get(runtime_dtype, 4) / _BYTES_PER_PARAM.get(stored_dtype, 2)
    return stored_bytes * scale / GIB


def preallocating_need_gib(weights: float, ranks: int, cache_gib: float) -> float:
    """A preallocating engine's need on each of its devices: its share of the weights (tensor
    and pipeline ranks each hold one, on a device of its own) with the engine's margin, plus
    the KV cache it allocates up front."""
    return weights * PREALLOCATING_WEIGHTS_FACTOR / ranks + cache_gib


def in_process_need_gib(weights: float) -> float:
    """An in-process model's need: its weights with the framework's margin, plus a batch's
    activations."""
    return weights * IN_PROCESS_WEIGHTS_FACTOR + BATCH_ACTIVATIONS_GIB


def free_memory_gib(on_gpu: bool) -> float:
    """Free memory of the device models load on: the GPU's, or the host's available RAM."""
    if on_gpu:
        import torch

        free, _total = torch.cuda.mem_get_info()
        return free / GIB
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 / GIB
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
