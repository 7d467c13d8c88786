"""The GPU throughput check of docs/performance.md: `chateval bench` on the transformers backend
with a random-weight model of a realistic shape.

The GPU machine here has no vLLM, no network and takes at most 64 MiB per call, so the model is
built there from a config (default: the Llama-3-8B shape, bfloat16, random weights) with a small
real tokenizer carried along (SmolLM2's: its vocabulary sets the embedding size). The model is
saved as a registry entry in a scratch folder and the FairEval workload of
configs/bench/faireval_3x2.yaml runs on it: sequential (a subset, scaled), scheduled, limit;
with ``--compare-prefix-cache`` a second bench without prefix reuse follows.

Random weights write random tokens, so every discussion turn runs to its token budget: the
token load is the workload's worst case, and the verdicts (constrained) still parse. Speeds
are real; the metrics in the report mean nothing.

    python scripts/gpu_bench.py --data ../shared/datasets/faireval --tokenizer models/smollm2-135m \
        --out runs/gpu_bench                                   # on the GPU machine
    python scripts/gpu_bench.py --shape tiny --device cpu --items 1 ...   # a quick dry run here
"""

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

SHAPES: dict[str, dict[str, Any]] = {
    "llama3-8b": {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "rope_theta": 500000.0,
    },
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "rope_theta": 10000.0,
    },
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
MODEL_NAME = "random-model"
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "bench" / "faireval_3x2.yaml"


def build_model(shape: str, tokenizer_dir: Path, models_dir: Path, device: str) -> float:
    """Write a random-weight model of ``shape`` and its registry entry; return the seconds taken."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    started = time.perf_counter()
    folder = models_dir / MODEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (tokenizer_dir / name).exists():
            shutil.copy(tokenizer_dir / name, folder / name)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=8192,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
        **SHAPES[shape],
    )
    dtype = "bfloat16" if device.startswith("cuda") else "float32"
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))  # built in its run dtype: no float32 copy first
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    model.save_pretrained(folder)
    del model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()  # the bench loads it again; leave the memory free for that
    (models_dir / "registry.yaml").write_text(
        f"{MODEL_NAME}: {{path: {MODEL_NAME}, dtype: {dtype}, max_model_len: 4096, backend: transformers}}\n"
    )
    return time.perf_counter() - started


def bench(args: argparse.Namespace, models_dir: Path, prefix_cache: bool) -> dict[str, Any]:
    from chateval.bench.modes import run_bench
    from chateval.config.files import load_config

    overrides = [
        "backend=transformers",
        f"models_dir={models_dir}",
        f"data.path={args.data.resolve()}",
        f"transformers.batch_size={args.batch_size}",
        f"transformers.device={args.device}",
        f"transformers.prefix_cache={str(prefix_cache).lower()}",
        f"transformers.kv_store_gib={args.kv_store_gib}",
    ]
    if args.items:
        overrides.append(f"data.limit={args.items}")
    agents = len(load_config(CONFIG).agents)
    overrides += [f"agents.{i}.model={MODEL_NAME}" for i in range(agents)]
    config = load_config(CONFIG, overrides)
    return run_bench(
        config,
        sequential_items=args.sequential_items,
        on_mode=lambda mode: print(f"prefix_cache={prefix_cache}: mode {mode}", flush=True),
    )


def machine(device: str) -> dict[str, Any]:
    import torch
    import transformers

    facts: dict[str, Any] = {"torch": torch.__version__, "transformers": transformers.__version__}
    if device.startswith("cuda"):
        facts["gpu"] = torch.cuda.get_device_name(0)
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the FairEval folder")
    parser.add_argument("--tokenizer", type=Path, required=True, help="folder with tokenizer files")
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON reports")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="llama3-8b")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--items", type=int, default=None, help="first N questions (default: all 80)")
    parser.add_argument("--sequential-items", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--kv-store-gib",
        type=float,
        default=40.0,
        help="memory for kept KV sequences (Llama-3-8B: 128 KiB a token; 80 debates need ~15 GiB)",
    )
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/chateval_gpu_bench"))
    parser.add_argument("--compare-prefix-cache", action="store_true")
    args = parser.parse_args()

    models_dir = args.scratch.resolve() / "models"  # the config resolves relative paths elsewhere
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"shape": args.shape, "batch_size": args.batch_size, **machine(args.device)}
    report["build_seconds"] = round(build_model(args.shape, args.tokenizer, models_dir, args.device), 1)
    print(f"model built in {report['build_seconds']} s", flush=True)
    report["prefix_cache"] = bench(args, models_dir, prefix_cache=True)
    (args.out / "gpu_bench.json").write_text(json.dumps(report, indent=2) + "\n")
    if args.compare_prefix_cache:
        report["no_prefix_cache"] = bench(args, models_dir, prefix_cache=False)
        (args.out / "gpu_bench.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if not isinstance(v, dict)}, indent=2))
    for key in ("prefix_cache", "no_prefix_cache"):
        if key in report:
            speedup, efficiency = (
                report[key][k] for k in ("speedup_scheduled_vs_sequential", "efficiency_scheduled_vs_limit")
            )
            print(f"{key}: scheduled vs sequential {speedup}x, vs limit {efficiency}")


if __name__ == "__main__":
    main()
