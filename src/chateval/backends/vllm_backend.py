"""The vLLM backend: one offline ``vllm.LLM`` engine per model, one ``chat`` call per batch.

Verdict constraints go through vLLM structured outputs with the outlines backend; prefix
caching is on, so agents and rounds of one item reuse the cached shared prompt prefix.
"""

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chateval.core.backend import (
    GenerationRequest,
    GenerationResult,
    HFTokenCounting,
    probabilities_by_text,
)
from chateval.core.engine_settings import VllmSettings
from chateval.core.model_spec import ModelSpec, on_gpu, runtime_dtype
from chateval.errors import BackendError, ConfigError

log = logging.getLogger(__name__)

# vLLM's CPU build treats gpu_memory_utilization as a share of host memory; its default
# (0.9) fails to start on small machines, 0.3 is what works on a 24 GiB CI box.
_CPU_MEMORY_FRACTION = 0.3
GPU_MEMORY_FRACTION = 0.85
_CPU_BLOCK_SIZE = 32


def _cpu_engine_environment(settings: VllmSettings, ranks: int = 1) -> None:
    """Engine settings that vLLM's CPU build reads from the environment; the user's win.

    By default it reserves one core for the frontend and pins OpenMP to the rest, which on a
    2-core machine halves decode speed; in-process mode saves two process hops per step. With
    ``enforce_eager: false``, the AOT-compiled model vLLM 0.32 saves on CPUs fails to load
    ("no attribute 'finalize_loading'"), so every start would compile again; without AOT,
    later starts reuse inductor's cache (default model: 79 s instead of 174 s to start).
    Tensor or pipeline parallel ranks each need their own cores ("0|1" for two ranks on two
    cores): vLLM refuses a binding with fewer lists than ranks.
    """
    global _BIND_SET_HERE
    wanted = cpu_engine_settings(settings, ranks)
    bind = wanted.pop("VLLM_CPU_OMP_THREADS_BIND")
    if os.environ.get("VLLM_CPU_OMP_THREADS_BIND", _BIND_SET_HERE) == _BIND_SET_HERE:
        _BIND_SET_HERE = os.environ["VLLM_CPU_OMP_THREADS_BIND"] = bind
    for name, value in wanted.items():
        os.environ.setdefault(name, value)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


def cpu_engine_settings(settings: VllmSettings, ranks: int = 1) -> dict[str, str]:
    """The environment chateval gives vLLM's CPU build (see ``_cpu_engine_environment``);
    a ``vllm serve`` meant to decode like the offline engine gets the same."""
    cores = os.cpu_count() or 1
    return {
        "VLLM_CPU_OMP_THREADS_BIND": _core_lists(cores, ranks),
        "VLLM_CPU_KVCACHE_SPACE": str(settings.cpu_kvcache_space_gib),
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        "OMP_NUM_THREADS": str(cores),
        "VLLM_USE_AOT_COMPILE": "0",
        **REGEX_COMPILATION,
    }


# vLLM gives up on compiling a constraint after 5 s and then finishes the request with no
# tokens. Each constraint is compiled once per engine, but the assessments' (an explanation
# first) takes seconds on a busy 2-core machine: give it time rather than lose answers.
REGEX_COMPILATION = {"VLLM_REGEX_COMPILATION_TIMEOUT_S": "300"}


_BIND_SET_HERE: str | None = None  # the core binding chateval chose (a user's is never replaced)


def _core_lists(cores: int, ranks: int) -> str:
    """``cores`` split into ``ranks`` contiguous ranges, vLLM's way: ``0-3|4-7``."""
    share = max(1, cores // ranks)
    ranges = [(r * share, min(cores, (r + 1) * share) - 1) for r in range(ranks)]
    return "|".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def parallel_ranks(args: Mapping[str, Any]) -> int:
    """Processes one engine runs on: tensor x pipeline parallel size."""
    return int(args.get("tensor_parallel_size", 1)) * int(args.get("pipeline_parallel_size", 1))


_PARKED: list[Any] = []  # closed engines kept alive while other engines of the process run


# Engine arguments chateval sets from elsewhere: where each one is configured instead.
RESERVED_ENGINE_ARGS = {
    "model": "the agent's model",
    "tokenizer": "the model's folder",
    "dtype": "the registry entry's dtype",
    "max_model_len": "the registry entry's max_model_len",
    "trust_remote_code": "the registry entry's trust_remote_code",
    "seed": "sampling.seed",
    "structured_outputs_config": "chateval (outlines constrains every verdict)",
    "enable_prefix_caching": "chateval (debates rely on prefix reuse)",
}


def engine_args(model: str, spec: ModelSpec, settings: VllmSettings) -> dict[str, Any]:
    """The model's extra engine arguments: its registry entry's, then the run config's."""
    return {**spec.engine_args, **settings.engine_args.get(model, {})}


def memory_fraction(
    settings: VllmSettings, args: Mapping[str, Any], gpu: bool, placement_share: float | None = None
) -> float:
    """The share of memory an engine is started with: the model's engine arguments, else the
    placement's share, else the run's setting, else the device's default."""
    default = GPU_MEMORY_FRACTION if gpu else _CPU_MEMORY_FRACTION
    chosen = args.get("gpu_memory_utilization") or placement_share or settings.gpu_memory_utilization
    return float(chosen or default)


def check_engine_args(
    model: str, args: Mapping[str, Any], gpu: bool, folder: Path | None = None, count_devices: bool = True
) -> None:
    """Refuse, before any load, arguments the installed vLLM does not know, arguments chateval
    sets itself, more parallel ranks than this machine has devices for (``count_devices``;
    not for replicas, which run elsewhere), and (with the model's ``folder``) a tensor-parallel
    size that does not divide its attention heads."""
    if not args:
        return
    import dataclasses

    import vllm
    from vllm.engine.arg_utils import EngineArgs

    known = {f.name for f in dataclasses.fields(EngineArgs)}
    unknown = sorted(set(args) - known)
    if unknown:
        raise ConfigError(
            f"model {model!r}: unknown vLLM engine argument(s) {', '.join(unknown)}; vLLM "
            f"{vllm.__version__} takes: {', '.join(sorted(known - set(RESERVED_ENGINE_ARGS)))}"
        )
    for key in sorted(set(args) & set(RESERVED_ENGINE_ARGS)):
        raise ConfigError(f"model {model!r}: engine argument {key!r} is set by {RESERVED_ENGINE_ARGS[key]}")
    ranks = parallel_ranks(args)
    devices = _visible_gpus() if gpu else (os.cpu_count() or 1)
    if count_devices and ranks > devices:
        kind = "GPUs are visible" if gpu else "CPU cores are here (one per rank at least)"
        raise ConfigError(
            f"model {model!r}: tensor_parallel_size x pipeline_parallel_size = {ranks}, but only "
            f"{devices} {kind}"
        )
    if folder is not None:
        _check_split(model, args, folder)


def _check_split(model: str, args: Mapping[str, Any], folder: Path) -> None:
    """Tensor parallelism splits attention heads, pipeline parallelism layers: both must go."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # not prepared yet: vLLM checks it at load
    config = config.get("text_config", config)
    tensor = int(args.get("tensor_parallel_size", 1))
    heads = config.get("num_attention_heads")
    if tensor > 1 and heads and heads % tensor:
        raise ConfigError(
            f"model {model!r}: tensor_parallel_size {tensor} does not divide its {heads} attention "
            f"heads ({folder / 'config.json'})"
        )
    pipeline = int(args.get("pipeline_parallel_size", 1))
    layers = config.get("num_hidden_layers")
    if pipeline > 1 and layers and pipeline > layers:
        raise ConfigError(f"model {model!r}: pipeline_parallel_size {pipeline} exceeds its {layers} layers")


def _visible_gpus() -> int:
    import torch

    return int(torch.cuda.device_count())


class VllmBackend(HFTokenCounting):
    """Serves one registry model with an offline vLLM engine."""

    _open = 0  # engines alive in this process

    def __init__(
        self, model: str, folder: Path, spec: ModelSpec, settings: VllmSettings, seed: int = 0
    ) -> None:
        self.model = model
        self.spec = spec
        self.context_window = spec.max_model_len
        self.use_template(spec)
        gpu = on_gpu()
        # Prefix-cache hits count whole blocks. vLLM's CPU default (128 tokens) wastes about 64
        # cached tokens per request; 32 is the smallest its CPU attention takes. On a GPU vLLM's
        # own default stands.
        block_size = settings.block_size or (None if gpu else _CPU_BLOCK_SIZE)
        if block_size and not gpu and block_size % _CPU_BLOCK_SIZE:
            raise ConfigError(
                f"vllm.block_size is {block_size}: vLLM's CPU attention takes multiples of "
                f"{_CPU_BLOCK_SIZE} only (e.g. 32, 64, 128)"
            )
        if not gpu:
            _cpu_engine_environment(settings, parallel_ranks(engine_args(model, spec, settings)))
        for name, value in REGEX_COMPILATION.items():
            os.environ.setdefault(name, value)
        try:
            from vllm import LLM
        except ImportError as exc:
            raise BackendError(
                "backend 'vllm' needs vLLM: install chateval[cpu] (CPU) or chateval[gpu] (CUDA), "
                "or set backend: transformers"
            ) from exc
        extra = engine_args(model, spec, settings)
        check_engine_args(model, extra, gpu, folder)
        self.ranks = parallel_ranks(extra)
        tunable: dict[str, Any] = {
            "gpu_memory_utilization": memory_fraction(settings, extra, gpu),
            "enforce_eager": settings.enforce_eager,
            "max_num_seqs": settings.max_num_seqs,
            **({"block_size": block_size} if block_size else {}),
            **extra,  # the model's own engine arguments win over the run's defaults
        }
        try:
            self.llm = LLM(
                model=str(folder),
                tokenizer=str(folder),
                dtype=runtime_dtype(spec.dtype, gpu),  # type: ignore[arg-type]  # vLLM's Literal of dtype names
                max_model_len=spec.max_model_len,
                enable_prefix_caching=True,
                seed=seed,
                trust_remote_code=spec.trust_remote_code,
                structured_outputs_config={"backend": "outlines"},
                **tunable,
            )
        except Exception as exc:  # vLLM raises many types; the user needs one clear message
            raise BackendError(f"vLLM could not load model {model!r} from {folder}: {exc}") from exc
        self.tokenizer = self.llm.get_tokenizer()
        self._submitted: dict[str, GenerationRequest] = {}  # streaming requests not yet finished
        self._running: dict[str, int] = {}  # streaming requests not yet finished -> tokens so far
        VllmBackend._open += 1

    def _sampling_params(self, request: GenerationRequest) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        # Exact ids, not a top-k that could miss a value; vLLM takes them from the logits after
        # the grammar's mask and before temperature, so they are renormalised over the allowed
        # tokens.
        ids = list(self.ids_of(request.probabilities_of)) if request.probabilities_of else None
        return SamplingParams(
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            top_p=request.top_p,
            seed=request.seed,
            structured_outputs=StructuredOutputsParams(regex=request.regex) if request.regex else None,
            logprob_token_ids=ids or None,
        )

    def prompt_ids(self, request: GenerationRequest) -> list[int]:
        """The request's chat rendered with the model's template, as token ids.

        Both the batch path and the streaming path submit these ids, so they see identical
        prompts (and the counts checked before a run are the counts the engine sees).
        """
        return self.render_ids(request.messages)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run all ``requests`` in one engine call; results in request order."""
        if not requests:
            return []
        prompts = [{"prompt_token_ids": self.prompt_ids(r)} for r in requests]
        try:
            outputs = self.llm.generate(
                prompts,  # type: ignore[arg-type]  # vLLM's TokensPrompt TypedDict, built as a plain dict
                [self._sampling_params(r) for r in requests],
                use_tqdm=False,  # the run's own bar counts the requests
            )
        except Exception as exc:
            raise BackendError(f"vLLM generation failed for model {self.model!r}: {exc}") from exc
        return [self._result(output, r) for output, r in zip(outputs, requests, strict=True)]

    # Streaming: requests enter the running engine as soon as they are ready (no step barrier).
    def submit(self, key: str, request: GenerationRequest) -> None:
        """Add one request to the engine; its result comes back from ``poll`` under ``key``."""
        try:
            self.llm.llm_engine.add_request(
                key,
                {"prompt_token_ids": self.prompt_ids(request)},
                self._sampling_params(request),
            )
        except Exception as exc:
            raise BackendError(f"vLLM could not queue a request for {self.model!r}: {exc}") from exc
        self._submitted[key] = request

    def poll(self) -> list[tuple[str, GenerationResult]]:
        """Run one engine step; return the requests that finished in it."""
        try:
            outputs: list[Any] = self.llm.llm_engine.step()
        except Exception as exc:
            raise BackendError(f"vLLM generation failed for model {self.model!r}: {exc}") from exc
        finished = []
        for output in outputs:
            if output.finished:
                self._running.pop(output.request_id, None)
                request = self._submitted.pop(output.request_id)
                finished.append((output.request_id, self._result(output, request)))
            else:  # submitted requests report their tokens so far (cumulative outputs)
                self._running[output.request_id] = len(output.outputs[0].token_ids)
        return finished

    def running_tokens(self) -> int:
        """Tokens generated so far by the submitted requests that have not finished."""
        return sum(self._running.values())

    def _result(self, output: Any, request: GenerationRequest) -> GenerationResult:
        completion = output.outputs[0]
        ends: tuple[int, ...] = ()
        probabilities = None
        if request.probabilities_of and completion.logprobs is not None:
            texts = self.ids_of(request.probabilities_of)
            ends = self.token_ends(completion.token_ids)
            probabilities = tuple(
                probabilities_by_text({t: p.logprob for t, p in (position or {}).items()}, texts)
                for position in completion.logprobs
            )
        return GenerationResult(
            text=completion.text,
            prompt_tokens=len(output.prompt_token_ids or ()),
            generated_tokens=len(completion.token_ids),
            finish_reason="length" if completion.finish_reason == "length" else "stop",
            cached_prompt_tokens=int(output.num_cached_tokens or 0),
            token_ends=ends,
            token_probabilities=probabilities,
        )

    def reset_cache(self) -> None:
        """Forget cached prefixes (benchmarks compare modes from a cold cache)."""
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Shut the engine down and free its memory (so another model can take its place).

        Freeing an in-process engine also tears down vLLM's process-wide parallel state, which
        every other engine of the process still uses; so while others are open the engine is
        parked, not freed (its memory returns when the last engine closes). Phased runs hold
        one engine at a time, so they free each one. An engine with several ranks runs them in
        worker processes of its own, which would hold their cores while parked: it is freed
        at once.
        """
        import gc

        if not hasattr(self, "llm"):
            return
        VllmBackend._open -= 1
        if VllmBackend._open > 0 and self.ranks == 1:
            log.debug("parking the %s engine until the other vLLM engines close", self.model)
            _PARKED.append(self.llm)
            del self.llm
            return
        for llm in [self.llm] if VllmBackend._open > 0 else [*_PARKED, self.llm]:
            core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
            shutdown = getattr(core, "shutdown", None)
            if callable(shutdown):
                try:
                    shutdown()
                except Exception as exc:  # a failed shutdown must not hide the run's results
                    log.warning("vLLM engine shutdown failed: %s", exc)
        if VllmBackend._open == 0:
            _PARKED.clear()
        del self.llm
        gc.collect()
        if on_gpu():
            import torch

            torch.cuda.empty_cache()
