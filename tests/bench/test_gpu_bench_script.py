"""scripts/gpu_bench.sh (the one command) and scripts/gpu_bench.py, run here with the tiny shape
on CPU: the GPU check must not rot between the sessions that have a GPU (it gets one prepared
call there)."""

import json
import subprocess
from pathlib import Path

import pytest

from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from tests.support.helpers import MODELS_DIR, ROOT

FAIREVAL = ROOT.parent / "shared" / "datasets" / "faireval"


@pytest.mark.slow
@pytest.mark.skipif(not FAIREVAL.is_dir(), reason="../shared/datasets not present")
def test_gpu_bench_dry_run_on_cpu(registry: ModelRegistry, tmp_path: Path) -> None:
    command = [
        "bash",
        str(ROOT / "scripts" / "gpu_bench.sh"),
        str(tmp_path / "out"),
        "--shape=tiny",
        "--device=cpu",
        "--items=1",
        "--sequential-items=1",
        "--batch-size=4",
        f"--data={FAIREVAL}",
        f"--tokenizer={MODELS_DIR / DEFAULT_MODEL}",
        f"--scratch={tmp_path / 'scratch'}",
        "--compare-prefix-cache",
    ]
    subprocess.run(command, check=True, timeout=600)
    report = json.loads((tmp_path / "out" / "gpu_bench.json").read_text())
    with_cache, without = report["prefix_cache"], report["no_prefix_cache"]
    modes = {m["mode"]: m for m in with_cache["modes"]}
    assert set(modes) == {"scheduled", "limit", "sequential"}
    # 3 referees x (2 rounds + the verdict's scores) x 2 debates
    assert with_cache["debates"] == 2 and modes["scheduled"]["requests"] == 18
    # Batches of referees share the panel rules: reused with the cache on, never without it.
    assert modes["scheduled"]["prefix_cache_hit_rate"] > 0.2
    assert all(m["prefix_cache_hit_rate"] == 0 for m in without["modes"])


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_the_one_command_stops_without_a_gpu(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the command would run the bench")
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_bench.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: no CUDA GPU here")
    assert "--shape tiny --device cpu --items 1" in result.stderr
