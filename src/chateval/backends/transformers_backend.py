"""The transformers backend: batched ``generate`` with left padding, on CPU or CUDA.

Requests are grouped by their decoding settings, sorted by prompt length (so a batch pads
little) and run in batches of ``batch_size``. Verdict constraints are enforced with an
outlines logits processor (outlines-core regex index, compiled once per pattern).
"""

import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chateval.backends.base import GenerationRequest, GenerationResult, HFTokenCounting
from chateval.config import TransformersConfig
from chateval.errors import BackendError
from chateval.models import ModelSpec, runtime_dtype

log = logging.getLogger(__name__)

_GroupKey = tuple[int, float, float, int | None, str | None]


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
        self.tokenizer.padding_side = "left"  # decoder-only batches must be left-padded
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if spec.chat_template:
            self.tokenizer.chat_template = spec.chat_template
        # Stop on every end token the model declares (Gemma: <eos> and <end_of_turn>).
        declared = self.hf_model.generation_config.eos_token_id
        declared = [declared] if isinstance(declared, int) else list(declared or [])
        self.eos_ids: list[int] = declared or [self.tokenizer.eos_token_id]
        self._outlines_backend: Any = None
        self._indexes: dict[str, Any] = {}

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

    def _prompt(self, request: GenerationRequest) -> str:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        text: str = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return text

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run ``requests`` in length-sorted batches; results in request order."""
        from tqdm.auto import tqdm

        prompts = [self._prompt(r) for r in requests]
        lengths = [len(self.tokenizer(p, add_special_tokens=False).input_ids) for p in prompts]
        groups: dict[_GroupKey, list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.max_tokens, r.temperature, r.top_p, r.seed, r.regex)].append(i)
        batches: list[tuple[_GroupKey, list[int]]] = []
        for key, indices in groups.items():
            indices.sort(key=lambda i: lengths[i])
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

    def _run_batch(self, key: _GroupKey, prompts: list[str]) -> list[GenerationResult]:
        import torch
        from transformers import LogitsProcessorList

        max_tokens, temperature, top_p, seed, regex = key
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(
            self.device
        )
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p}
            if seed is not None:
                torch.manual_seed(seed)
        processors = LogitsProcessorList([self._logits_processor(regex)] if regex else [])
        try:
            with torch.inference_mode():
                output = self.hf_model.generate(
                    **encoded,
                    max_new_tokens=max_tokens,
                    logits_processor=processors,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.eos_ids,
                    **sampling,
                )
        except RuntimeError as exc:
            raise BackendError(f"transformers generation failed for model {self.model!r}: {exc}") from exc
        new_tokens = output[:, encoded["input_ids"].shape[1] :].tolist()
        prompt_lengths = encoded["attention_mask"].sum(dim=1).tolist()
        eos = set(self.eos_ids)
        results = []
        for tokens, prompt_length in zip(new_tokens, prompt_lengths, strict=True):
            end = next((i for i, token in enumerate(tokens) if token in eos), None)
            finished = end is not None
            generated = tokens[:end] if end is not None else tokens
            results.append(
                GenerationResult(
                    text=self.tokenizer.decode(generated, skip_special_tokens=True),
                    prompt_tokens=int(prompt_length),
                    completion_tokens=len(generated) + (1 if finished else 0),
                    finish_reason="stop" if finished or len(generated) < max_tokens else "length",
                )
            )
        return results

    def close(self) -> None:
        """Drop the model and free accelerator memory."""
        import gc

        import torch

        del self.hf_model
        self._outlines_backend = None
        self._indexes.clear()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
