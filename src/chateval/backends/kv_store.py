"""Kept KV caches of token sequences, found again by their longest common prefix.

The transformers backend computes each request's keys and values once and keeps them here
(prompt and answer, per layer, without padding). A debate's next prompt repeats its last
prompt and answer and adds a little (the ``conversation`` layout), and all prompts open with
the same system prompt and rules; so a new request starts from the longest prefix it shares
with a kept sequence and computes only the rest.

A kept sequence that a new one extends is dropped: the longer one serves its prefixes too.
Past the memory budget the least recently used sequences go first.
"""

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# Per layer: (keys, values), each [kv_heads, tokens, head_dim].
Layers = list[tuple[Any, Any]]


@dataclass(frozen=True)
class KeptSequence:
    """Token ids and the KV of every one of them."""

    ids: np.ndarray
    layers: Layers
    nbytes: int


def _nbytes(layers: Layers) -> int:
    return sum(k.element_size() * k.nelement() + v.element_size() * v.nelement() for k, v in layers)


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    same = a[:n] == b[:n]
    return n if bool(same.all()) else int(same.argmin())


class KVStore:
    """Token sequences with their KV, looked up by longest common prefix; LRU within a budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._kept: OrderedDict[int, KeptSequence] = OrderedDict()  # oldest use first
        self._bytes = 0
        self._serial = 0

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def nbytes(self) -> int:
        """Memory the kept tensors take."""
        return self._bytes

    def longest_prefix(
        self, ids: Sequence[int], limit: int, touch: bool = True
    ) -> tuple[int, KeptSequence | None]:
        """The most leading tokens of ``ids`` (at most ``limit``) that a kept sequence starts with.

        ``touch`` marks the sequence found as just used (a lookup that only plans does not).
        """
        row = np.asarray(ids[:limit], dtype=np.int64)
        best, found, found_key = 0, None, None
        for key, kept in self._kept.items():
            if min(len(row), len(kept.ids)) <= best:
                continue
            length = _common_prefix(row, kept.ids)
            if length > best:
                best, found, found_key = length, kept, key
        if touch and found_key is not None:
            self._kept.move_to_end(found_key)
        return best, found

    def add(self, ids: Sequence[int], layers: Layers) -> KeptSequence:
        """Keep ``ids`` with their KV (if the budget allows); return the kept sequence."""
        array = np.asarray(ids, dtype=np.int64)
        sequence = KeptSequence(array, layers, _nbytes(layers))
        if sequence.nbytes > self.budget_bytes:  # never kept: leave its prefixes where they are
            return sequence
        for key, kept in list(self._kept.items()):
            shared = _common_prefix(array, kept.ids)
            if shared == len(array):  # already kept inside a longer sequence
                self._kept.move_to_end(key)
                return sequence
            if shared == len(kept.ids):  # the new sequence extends it
                self._drop(key)
        self._kept[self._serial] = sequence
        self._serial += 1
        self._bytes += sequence.nbytes
        while self._bytes > self.budget_bytes:
            self._drop(next(iter(self._kept)))
        return sequence

    def clear(self) -> None:
        """Forget every kept sequence."""
        self._kept.clear()
        self._bytes = 0

    def _drop(self, key: int) -> None:
        self._bytes -= self._kept.pop(key).nbytes
