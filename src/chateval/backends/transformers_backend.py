"""The transformers backend: batched ``generate`` with left padding, on CPU or CUDA.

Requests are grouped by their decoding settings, sorted by prompt length (so a batch pads
little) and run in batches of ``batch_size``. Verdict constraints are enforced with an
outlines logits processor (outlines-core regex index, compiled once per pattern).

Prefix reuse (``transformers.prefix_cache``): the rows of a batch usually open with the same
tokens (system prompt, panel rules, often the task). That shared prefix is run once, its KV
cache kept (a few, least recently used first out) and copied into every row; each row then
computes only its own rest. A row is laid out as ``prefix + padding + own tokens``, the padding
masked, so positions and attention are those of the unpadded prompt. Models with sliding-window
attention (Gemma 3) do not reuse: transformers counts their window in cache slots, padding
included, so padding inside a row would shrink the window.
"""

import copy
import logging
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chateval.backends.base import GenerationRequest, GenerationResult, HFTokenCounting
from chateval.config import TransformersConfig
from chateval.errors import BackendError
from chateval.models import ModelSpec, runtime_dtype

log = logging.getLogger(__name__)

_GroupKey = tuple[int, float, float, int | None, str | None]

# A shared prefix shorter than this is not worth a separate forward pass and a cache copy.
MIN_SHARED_PREFIX = 32
_KEPT_PREFIXES = 4


def shared_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Tokens every row starts with, leaving each row at least one token of its own.

    ``generate`` needs one uncached token per row to produce the first logits from.
    """
    shortest = min(len(row) for row in rows)
    length = 0
    while length < shortest - 1 and all(row[length] == rows[0][length] for row in rows):
        length += 1
    return length


def has_sliding_window(config: Any) -> bool:
    """Whether any attention layer of the model is a sliding-window one."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    layer_types = getattr(text, "layer_types", None)
    if layer_types:
        return "sliding_attention" in layer_types
    return getattr(text, "sliding_window", None) is not None


class TransformersBackend(HFTokenCounting):
    """Serves one registry model with Hugging Face transformers."""

    def __init__(self, model: str, folder: Path, spec: ModelSpec, settings: TransformersConfig) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = model
        self.context_window = spec.max_model_len
        self.chat_template = spec.chat_template
        self.batch_size = settings.batch_size
        self.device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = runtime_dtype(spec.dtype, self.device.startswith("cuda"))
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(
                folder, trust_remote_code=spec.trust_remote_code
            )
            loaded: Any = AutoModelForCausalLM.from_pretrained(
                folder, dtype=getattr(torch, dtype), trust_remote_code=spec.trust_remote_code
            )
            self.hf_model: Any = loaded.to(self.device)
        except (OSError, ValueError) as exc:
            raise BackendError(f"transformers could not load model {model!r} from {folder}: {exc}") from exc
        self.hf_model.eval()
        self.prefix_cache = settings.prefix_cache and not has_sliding_window(self.hf_model.config)
        if settings.prefix_cache and not self.prefix_cache:
            log.info("%s: no prefix reuse (sliding-window attention counts padding)", model)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # Stop on every end token the model declares (Gemma: <eos> and <end_of_turn>).
        declared = self.hf_model.generation_config.eos_token_id
        declared = [declared] if isinstance(declared, int) else list(declared or [])
        self.eos_ids: list[int] = declared or [self.tokenizer.eos_token_id]
        self._outlines_backend: Any = None
        self._indexes: dict[str, Any] = {}
        self._prefixes: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # prefix ids -> KV cache

    def _logits_processor(self, regex: str) -> Any:
        """A fresh outlines processor for one batch (it keeps per-row state)."""
        import outlines
        from outlines.backends.outlines_core import OutlinesCoreBackend, OutlinesCoreLogitsProcessor
        from outlines_core import Index

        if self._outlines_backend is None:
            self._outlines_backend = OutlinesCoreBackend(
                outlines.from_transformers(self.hf_model, self.tokenizer)
            )
        if regex not in self._indexes:
            self._indexes[regex] = Index(regex, self._outlines_backend.vocabulary)
        return OutlinesCoreLogitsProcessor(self._indexes[regex], "torch")

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run ``requests`` in length-sorted batches; results in request order."""
        from tqdm.auto import tqdm

        prompts = [self.render_ids(r.messages) for r in requests]
        groups: dict[_GroupKey, list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.max_tokens, r.temperature, r.top_p, r.seed, r.regex)].append(i)
        batches: list[tuple[_GroupKey, list[int]]] = []
        for key, indices in groups.items():
            indices.sort(key=lambda i: len(prompts[i]))
            batches += [
                (key, indices[s : s + self.batch_size]) for s in range(0, len(indices), self.batch_size)
            ]
        results: dict[int, GenerationResult] = {}
        with tqdm(total=len(requests), desc=f"{self.model}", unit="req", leave=False) as bar:
            for key, indices in batches:
                for i, result in zip(
                    indices, self._run_batch(key, [prompts[i] for i in indices]), strict=True
                ):
                    results[i] = result
                bar.update(len(indices))
        return [results[i] for i in range(len(requests))]

    def _prefix_kv(self, prefix: list[int]) -> tuple[Any, int]:
        """The KV cache of ``prefix`` (batch of one) and how many of its tokens had to be computed.

        A kept prefix that ``prefix`` extends is copied and extended by the missing tokens only.
        """
        import torch
        from transformers import DynamicCache

        key = tuple(prefix)
        if key in self._prefixes:
            self._prefixes.move_to_end(key)
            return self._prefixes[key], 0
        base = max((k for k in self._prefixes if key[: len(k)] == k), key=len, default=())
        cache = copy.deepcopy(self._prefixes[base]) if base else DynamicCache(config=self.hf_model.config)
        rest = self._tensor([prefix[len(base) :]])
        with torch.inference_mode():  # logits of the last token only: the others are never read
            self.hf_model(input_ids=rest, past_key_values=cache, use_cache=True, logits_to_keep=1)
        self._prefixes[key] = cache
        if len(self._prefixes) > _KEPT_PREFIXES:
            self._prefixes.popitem(last=False)
        return cache, len(key) - len(base)

    def _batch_inputs(self, rows: list[list[int]]) -> tuple[Any, Any, Any, list[int]]:
        """Input ids, attention mask, KV cache (or None) and each row's reused prompt tokens.

        A prefix computed for this batch counts as reused by every row but the first.
        """
        shared = shared_prefix_length(rows) if self.prefix_cache and len(rows) > 1 else 0
        if shared < MIN_SHARED_PREFIX:
            shared = 0
        prefix, rests = rows[0][:shared], [row[shared:] for row in rows]
        width = max(len(rest) for rest in rests)
        pad = self.tokenizer.pad_token_id
        ids = [prefix + [pad] * (width - len(rest)) + rest for rest in rests]
        mask = [[1] * shared + [0] * (width - len(rest)) + [1] * len(rest) for rest in rests]
        cache, reused = None, [0] * len(rows)
        if shared:
            kept, computed = self._prefix_kv(prefix)
            cache = copy.deepcopy(kept)  # generate appends to the cache it gets
            cache.batch_repeat_interleave(len(rows))
            reused = [shared - computed] + [shared] * (len(rows) - 1)
        return self._tensor(ids), self._tensor(mask), cache, reused

    def _tensor(self, rows: list[list[int]]) -> Any:
        import torch

        return torch.tensor(rows, device=self.device)

    def _run_batch(self, key: _GroupKey, rows: list[list[int]]) -> list[GenerationResult]:
        import torch
        from transformers import LogitsProcessorList

        max_tokens, temperature, top_p, seed, regex = key
        input_ids, attention_mask, cache, reused = self._batch_inputs(rows)
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p}
            if seed is not None:
                torch.manual_seed(seed)
        processors = LogitsProcessorList([self._logits_processor(regex)] if regex else [])
        try:
            with torch.inference_mode():
                output = self.hf_model.generate(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    past_key_values=cache,
                    max_new_tokens=max_tokens,
                    logits_processor=processors,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.eos_ids,
                    **sampling,
                )
        except RuntimeError as exc:
            raise BackendError(f"transformers generation failed for model {self.model!r}: {exc}") from exc
        new_tokens = output[:, input_ids.shape[1] :].tolist()
        eos = set(self.eos_ids)
        results = []
        for tokens, row, cached in zip(new_tokens, rows, reused, strict=True):
            end = next((i for i, token in enumerate(tokens) if token in eos), None)
            finished = end is not None
            generated = tokens[:end] if end is not None else tokens
            results.append(
                GenerationResult(
                    text=self.tokenizer.decode(generated, skip_special_tokens=True),
                    prompt_tokens=len(row),
                    completion_tokens=len(generated) + (1 if finished else 0),
                    finish_reason="stop" if finished or len(generated) < max_tokens else "length",
                    cached_tokens=cached,
                )
            )
        return results

    def close(self) -> None:
        """Drop the model and free accelerator memory."""
        import gc

        import torch

        del self.hf_model
        self._outlines_backend = None
        self._prefixes.clear()
        self._indexes.clear()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
