"""Raw engine speed behind docs/performance.md: prefill and decode tokens/s at batch 1 and N.

Loads a config's first model with the same engine settings a run uses (chateval's vLLM backend),
then times random-token prompts that never hit the prefix cache:
- prefill: prompts of PROMPT tokens, 1 output token; prompt tokens per second;
- decode: the same prompts with DECODE forced output tokens, minus the 1-token time; generated
  tokens per second;
- and how long the engine took to start (loading, profiling, compiling unless enforce_eager).

    .venv/bin/python scripts/engine_microbench.py configs/bench/faireval_3x2.yaml \
        -o docs/performance/cpu_engine_microbench.json
"""

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from chateval.config.files import load_config
from chateval.engines.factory import Engines
from chateval.engines.models import ModelRegistry

PROMPT = 800
DECODE = 64


def timed(llm: Any, prompts: list[list[int]], max_tokens: int) -> float:
    from vllm import SamplingParams

    params = SamplingParams(max_tokens=max_tokens, min_tokens=max_tokens, ignore_eos=True, temperature=0.0)
    llm.reset_prefix_cache()
    start = time.perf_counter()
    llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--batch", type=int, default=24, help="the larger batch size (default 24)")
    parser.add_argument(
        "--set", action="append", default=[], help="config override, e.g. vllm.block_size=128"
    )
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()

    config = load_config(args.config, args.set)
    model = config.agents[0].model
    start = time.perf_counter()
    backend: Any = Engines(config, ModelRegistry(config.models_dir)).load(model)
    results: dict[str, Any] = {
        "model": model,
        "overrides": args.set,
        "engine_start_seconds": round(time.perf_counter() - start, 1),  # with compiling, if any
        "prompt_tokens": PROMPT,
        "decode_tokens": DECODE,
    }
    print("engine started in", results["engine_start_seconds"], "s", flush=True)
    vocab = backend.tokenizer.vocab_size
    rng = random.Random(0)
    try:
        timed(backend.llm, [[rng.randrange(vocab) for _ in range(PROMPT)]], 2)  # warm-up
        for batch in (1, args.batch):
            prompts = [[rng.randrange(vocab) for _ in range(PROMPT)] for _ in range(batch)]
            prefill = timed(backend.llm, prompts, 1)
            full = timed(backend.llm, prompts, DECODE)
            results[f"batch_{batch}"] = {
                "prefill_tokens_per_second": round(batch * PROMPT / prefill, 1),
                "decode_tokens_per_second": round(batch * (DECODE - 1) / (full - prefill), 1),
            }
            print(batch, results[f"batch_{batch}"], flush=True)
    finally:
        backend.close()
    text = json.dumps(results, indent=2)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
