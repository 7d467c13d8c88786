"""The transformers backend: batched ``generate`` with left padding, on CPU or CUDA.

Requests are grouped by their decoding settings, sorted by the prompt tokens they must compute
(so a batch pads little) and run in batches of ``batch_size``. Verdict constraints are
enforced with an outlines logits processor (outlines-core regex index, compiled once per
pattern).

KV reuse (``transformers.prefix_cache``): every request's keys and values (prompt and answer)
are kept in a ``KVStore`` up to ``transformers.kv_store_gib``. A new request starts from the
longest prefix it shares with a kept sequence: in the ``conversation`` layout that is its
debate's previous prompt and answer, so a turn computes only its new text. Rows of a batch that
find nothing kept yet share the batch's common prefix (system prompt, panel rules), run once.
A row is laid out as ``padding + reused tokens + padding + own tokens`` with the reused part in
the KV cache and the padding masked, so positions and attention are those of the unpadded
prompt. Only models whose layers are all full attention reuse (``full_attention_only``): Gemma
3's sliding-window layers count their window in cache slots, padding included.
"""

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chateval.backends.kv_store import KeptSequence, KVStore
from chateval.core.backend import GenerationRequest, GenerationResult, HFTokenCounting
from chateval.core.engine_settings import TransformersSettings
from chateval.core.model_spec import ModelSpec, runtime_dtype
from chateval.core.tokenizers import load_tokenizer
from chateval.errors import BackendError

log = logging.getLogger(__name__)

_GroupKey = tuple[int, float, float, int | None, str | None, tuple[str, ...]]

# A reusable prefix shorter than this is not worth a separate forward pass and a cache copy.
MIN_SHARED_PREFIX = 32


def shared_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Tokens every row starts with, leaving each row at least one token of its own.

    ``generate`` needs one uncached token per row to produce the first logits from.
    """
    shortest = min(len(row) for row in rows)
    length = 0
    while length < shortest - 1 and all(row[length] == rows[0][length] for row in rows):
        length += 1
    return length


def full_attention_only(config: Any) -> bool:
    """Whether every layer is plain full attention, the only kind whose KV cache is reused.

    Sliding-window layers count their window in cache slots, padding included, so padding
    inside a row would shrink it; linear-attention and state-space layers keep no per-token
    keys and values to reuse.
    """
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    layer_types = getattr(text, "layer_types", None)
    if layer_types:
        return all(kind == "full_attention" for kind in layer_types)
    return getattr(text, "sliding_window", None) is None


class _ProbabilityRecorder:
    """A logits processor that keeps, at every step, the probabilities of some tokens per row
    (softmax of the scores it is handed) and changes nothing."""

    def __init__(self, texts: Mapping[int, str]) -> None:
        self.ids = list(texts)
        self.texts = [texts[i] for i in self.ids]
        self.steps: list[list[list[float]]] = []  # step -> row -> probability per id

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probabilities = torch.softmax(scores.float(), dim=-1)[:, self.ids]
        self.steps.append(probabilities.tolist())
        return scores

    def row(self, index: int, length: int) -> tuple[dict[str, float], ...]:
        """The first ``length`` positions of row ``index``, per text."""
        out = []
        for step in self.steps[:length]:
            by_text: dict[str, float] = {}
            for text, p in zip(self.texts, step[index], strict=True):
                by_text[text] = by_text.get(text, 0.0) + p
            out.append(by_text)
        return tuple(out)


class TransformersBackend(HFTokenCounting):
    """Serves one registry model with Hugging Face transformers."""

    def __init__(self, model: str, folder: Path, spec: ModelSpec, settings: TransformersSettings) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        self.model = model
        self.context_window = spec.max_model_len
        self.use_template(spec)
        self.batch_size = settings.batch_size
        self.device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = runtime_dtype(spec.dtype, self.device.startswith("cuda"))
        try:
            self.tokenizer: Any = load_tokenizer(folder, spec.trust_remote_code)
            loaded: Any = AutoModelForCausalLM.from_pretrained(
                folder, dtype=getattr(torch, dtype), trust_remote_code=spec.trust_remote_code
            )
            self.hf_model: Any = loaded.to(self.device)
        except (OSError, ValueError) as exc:
            raise BackendError(f"transformers could not load model {model!r} from {folder}: {exc}") from exc
        self.hf_model.eval()
        self.prefix_cache = settings.prefix_cache and full_attention_only(self.hf_model.config)
        if settings.prefix_cache and not self.prefix_cache:
            log.info("%s: no KV reuse (not every layer is full attention)", model)
        if self.tokenizer.pad_token_id is None:  # the shared tokenizer (load_tokenizer) gains a pad only
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # Stop on every end token the model declares (Gemma: <eos> and <end_of_turn>).
        declared = self.hf_model.generation_config.eos_token_id
        declared = [declared] if isinstance(declared, int) else list(declared or [])
        self.eos_ids: list[int] = declared or [self.tokenizer.eos_token_id]
        self._outlines_backend: Any = None
        self._indexes: dict[str, Any] = {}
        self.kv_store = KVStore(int(settings.kv_store_gib * 2**30))

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
        """Run ``requests`` in batches sorted by the tokens each must compute; results in order."""
        prompts = [self.render_ids(r.messages) for r in requests]
        groups: dict[_GroupKey, list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.max_tokens, r.temperature, r.top_p, r.seed, r.regex, r.probabilities_of)].append(i)
        # Sort by the tokens each prompt must compute (its length less what is kept for it), so
        # that a batch's rows pad little where padding costs a forward pass.
        computed = [len(p) - self._kept_length(p) for p in prompts]
        batches: list[tuple[_GroupKey, list[int]]] = []
        for key, indices in groups.items():
            indices.sort(key=lambda i: (computed[i], len(prompts[i])))
            batches += [
                (key, indices[s : s + self.batch_size]) for s in range(0, len(indices), self.batch_size)
            ]
        results: dict[int, GenerationResult] = {}
        for key, indices in batches:
            for i, result in zip(indices, self._run_batch(key, [prompts[i] for i in indices]), strict=True):
                results[i] = result
        return [results[i] for i in range(len(requests))]

    def _kept_length(self, prompt: list[int]) -> int:
        if not self.prefix_cache:
            return 0
        return self.kv_store.longest_prefix(prompt, len(prompt) - 1, touch=False)[0]

    def reset_cache(self) -> None:
        """Forget every kept KV sequence (the bench starts each mode cold)."""
        self.kv_store.clear()

    def _prefix_kv(self, prefix: list[int]) -> tuple[KeptSequence, int]:
        """The kept KV of ``prefix`` and how many of its tokens had to be computed for it.

        The longest kept sequence it shares a prefix with is extended by the missing tokens only.
        """
        import torch

        reused, base = self.kv_store.longest_prefix(prefix, len(prefix))
        if base is not None and reused == len(prefix):
            return base, 0
        cache = self._ragged_cache([base], [reused], reused)
        rest = self._tensor([prefix[reused:]])
        with torch.inference_mode():  # logits of the last token only: the others are never read
            self.hf_model(input_ids=rest, past_key_values=cache, use_cache=True, logits_to_keep=1)
        layers = [(layer.keys[0], layer.values[0]) for layer in cache.layers]
        return self.kv_store.add(prefix, layers), len(prefix) - reused

    def _ragged_cache(
        self, sources: Sequence[KeptSequence | None], lengths: Sequence[int], width: int
    ) -> Any:
        """A batch KV cache of ``width`` slots: row r holds the first ``lengths[r]`` kept tokens of
        ``sources[r]``, right-aligned (the slots before them are zeros, masked as padding)."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.hf_model.config)
        first = next((s for s, n in zip(sources, lengths, strict=True) if s is not None and n), None)
        if first is None:
            return cache
        for index, (keys, _) in enumerate(first.layers):
            heads, _, head_dim = keys.shape
            shape = (len(sources), heads, width, head_dim)
            batch_keys = torch.zeros(shape, dtype=keys.dtype, device=keys.device)
            batch_values = torch.zeros(shape, dtype=keys.dtype, device=keys.device)
            for row, (source, length) in enumerate(zip(sources, lengths, strict=True)):
                if source is not None and length:
                    kept_keys, kept_values = source.layers[index]
                    batch_keys[row, :, width - length :] = kept_keys[:, :length]
                    batch_values[row, :, width - length :] = kept_values[:, :length]
            cache.update(batch_keys, batch_values, index)
        return cache

    def _reuse_plan(self, rows: list[list[int]]) -> tuple[list[KeptSequence | None], list[int], list[int]]:
        """Per row: where its reused KV comes from, how many tokens it takes from there, and how
        many of those count as reused (the first row to use a prefix computed for this batch
        computed it).

        Each row takes the longest prefix it shares with a kept sequence (leaving it one token of
        its own: ``generate`` needs one to produce the first logits from). Rows that find less than
        the batch's common prefix get that prefix, computed once.
        """
        sources: list[KeptSequence | None] = [None] * len(rows)
        lengths = [0] * len(rows)
        if not self.prefix_cache:
            return sources, lengths, [0] * len(rows)
        for i, row in enumerate(rows):
            lengths[i], sources[i] = self.kv_store.longest_prefix(row, len(row) - 1)
        shared = shared_prefix_length(rows) if len(rows) > 1 else 0
        users: list[int] = []
        computed = 0
        if shared >= MIN_SHARED_PREFIX and min(lengths) < shared:
            prefix, computed = self._prefix_kv(rows[0][:shared])
            users = [i for i in range(len(rows)) if lengths[i] < shared]
            for i in users:
                lengths[i], sources[i] = shared, prefix
        for i in range(len(rows)):
            if lengths[i] < MIN_SHARED_PREFIX:
                lengths[i], sources[i] = 0, None
        reused = list(lengths)
        if users:
            reused[users[0]] -= computed
        return sources, lengths, reused

    def _batch_inputs(self, rows: list[list[int]]) -> tuple[Any, Any, Any, list[int]]:
        """Input ids, attention mask, KV cache (None without reuse) and each row's reused tokens."""
        sources, lengths, reused = self._reuse_plan(rows)
        cached_width = max(lengths)
        own = [len(row) - n for row, n in zip(rows, lengths, strict=True)]
        width = max(own)
        pad = self.tokenizer.pad_token_id
        ids, mask = [], []
        for row, n, mine in zip(rows, lengths, own, strict=True):
            ids.append([pad] * (cached_width - n) + row[:n] + [pad] * (width - mine) + row[n:])
            mask.append([0] * (cached_width - n) + [1] * n + [0] * (width - mine) + [1] * mine)
        # Without reuse generate makes its own cache; with it, ours is kept after the batch.
        cache = self._ragged_cache(sources, lengths, cached_width) if self.prefix_cache else None
        return self._tensor(ids), self._tensor(mask), cache, reused

    def _keep(self, cache: Any, mask: Any, rows: list[list[int]], fed: list[list[int]]) -> None:
        """Keep each row's prompt and fed-back answer tokens with their KV (padding left out)."""
        import torch

        if not self.prefix_cache:
            return
        prompt_width = mask.shape[1]
        for row, (prompt, answer) in enumerate(zip(rows, fed, strict=True)):
            slots = torch.cat(
                [
                    mask[row].nonzero().flatten(),
                    torch.arange(prompt_width, prompt_width + len(answer), device=mask.device),
                ]
            )
            layers = [
                (layer.keys[row].index_select(1, slots), layer.values[row].index_select(1, slots))
                for layer in cache.layers
            ]
            self.kv_store.add(prompt + answer, layers)

    def _tensor(self, rows: list[list[int]]) -> Any:
        import torch

        return torch.tensor(rows, device=self.device)

    def _run_batch(self, key: _GroupKey, rows: list[list[int]]) -> list[GenerationResult]:
        import torch
        from transformers import LogitsProcessorList

        max_tokens, temperature, top_p, seed, regex, probabilities_of = key
        input_ids, attention_mask, cache, reused = self._batch_inputs(rows)
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p}
            if seed is not None:
                torch.manual_seed(seed)
        processors = LogitsProcessorList([self._logits_processor(regex)] if regex else [])
        recorder = _ProbabilityRecorder(self.ids_of(probabilities_of)) if probabilities_of else None
        if recorder is not None:
            # After the constraint's mask: generate runs the processors it is given before its
            # temperature and top-p warpers, so these are vLLM's numbers (masked, untempered).
            processors.append(recorder)
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
        ends = [next((i for i, token in enumerate(t) if token in eos), None) for t in new_tokens]
        # The last token generate emits is never fed back, so its KV does not exist.
        fed = [
            tokens[: min(len(tokens) - 1, len(tokens) if end is None else end + 1)]
            for tokens, end in zip(new_tokens, ends, strict=True)
        ]
        self._keep(cache, attention_mask, rows, fed)
        results = []
        for index, (tokens, row, cached, end) in enumerate(zip(new_tokens, rows, reused, ends, strict=True)):
            finished = end is not None
            generated = tokens[:end] if end is not None else tokens
            emitted = tokens[: end + 1] if end is not None else tokens  # with the end token
            results.append(
                GenerationResult(
                    text=self.tokenizer.decode(generated, skip_special_tokens=True),
                    prompt_tokens=len(row),
                    generated_tokens=len(generated) + (1 if finished else 0),
                    finish_reason="stop" if finished or len(generated) < max_tokens else "length",
                    cached_prompt_tokens=cached,
                    token_ends=self.token_ends(emitted) if recorder else (),
                    token_probabilities=recorder.row(index, len(emitted)) if recorder else None,
                )
            )
        return results

    def close(self) -> None:
        """Drop the model and free accelerator memory."""
        import gc

        import torch

        del self.hf_model
        self._outlines_backend = None
        self.kv_store.clear()
        self._indexes.clear()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
