"""The transformers backend's store of kept KV sequences: lookup, extension and budget."""

import torch

from chateval.backends.kv_store import KVStore

TOKEN_BYTES = 8  # one layer, keys and values of [1 head, n tokens, 1 dim] in float32


def layers(ids: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """KV whose values are the token ids, so a test can see which tokens it got."""
    keys = torch.tensor(ids, dtype=torch.float32).reshape(1, len(ids), 1)
    return [(keys, -keys)]


def test_longest_common_prefix_within_a_limit() -> None:
    store = KVStore(budget_bytes=10_000)
    store.add([1, 2, 3, 4, 5], layers([1, 2, 3, 4, 5]))
    store.add([1, 2, 7, 8], layers([1, 2, 7, 8]))
    length, kept = store.longest_prefix([1, 2, 3, 4, 9, 9], limit=5)
    assert length == 4 and kept is not None and kept.layers[0][0][0, :length, 0].tolist() == [1, 2, 3, 4]
    assert store.longest_prefix([1, 2, 3, 4, 9], limit=3)[0] == 3  # the row keeps its own tokens
    assert store.longest_prefix([1, 2, 7, 8, 9], limit=4)[1].ids.tolist() == [1, 2, 7, 8]  # type: ignore[union-attr]
    assert store.longest_prefix([6, 1, 2], limit=2) == (0, None)


def test_a_sequence_that_extends_a_kept_one_replaces_it() -> None:
    store = KVStore(budget_bytes=10_000)
    store.add([1, 2, 3], layers([1, 2, 3]))
    store.add([1, 2, 3, 4, 5], layers([1, 2, 3, 4, 5]))
    assert len(store) == 1 and store.nbytes == 5 * TOKEN_BYTES
    store.add([1, 2], layers([1, 2]))  # already inside the kept sequence: nothing new
    assert len(store) == 1 and store.longest_prefix([1, 2, 3, 4, 5, 6], limit=5)[0] == 5


def test_least_recently_used_sequences_leave_first_past_the_budget() -> None:
    store = KVStore(budget_bytes=10 * TOKEN_BYTES)
    store.add([1, 1, 1, 1], layers([1, 1, 1, 1]))
    store.add([2, 2, 2, 2], layers([2, 2, 2, 2]))
    store.longest_prefix([1, 1, 9], limit=2)  # a use: [1, 1, ...] is now the most recent
    store.add([3, 3, 3, 3], layers([3, 3, 3, 3]))  # 12 tokens > 10: the oldest use goes
    assert store.longest_prefix([2, 2, 2], limit=2) == (0, None)
    assert store.longest_prefix([1, 1, 1], limit=2)[0] == 2 and store.nbytes == 8 * TOKEN_BYTES
    store.add(list(range(11)), layers(list(range(11))))  # larger than the whole budget: not kept
    assert len(store) == 2
    store.clear()
    assert len(store) == 0 and store.nbytes == 0


def test_a_sequence_over_the_budget_leaves_its_prefixes_kept() -> None:
    store = KVStore(budget_bytes=6 * TOKEN_BYTES)
    store.add([1, 2, 3], layers([1, 2, 3]))
    store.add(list(range(1, 9)), layers(list(range(1, 9))))  # extends [1, 2, 3] but is not kept
    assert len(store) == 1 and store.longest_prefix([1, 2, 3, 4], limit=3)[0] == 3


def test_a_planning_lookup_does_not_count_as_a_use() -> None:
    store = KVStore(budget_bytes=8 * TOKEN_BYTES)
    store.add([1, 1, 1, 1], layers([1, 1, 1, 1]))
    store.add([2, 2, 2, 2], layers([2, 2, 2, 2]))
    store.longest_prefix([1, 1, 9], limit=2, touch=False)
    store.add([3, 3, 3, 3], layers([3, 3, 3, 3]))  # [1, 1, ...] is still the oldest use: it goes
    assert store.longest_prefix([1, 1, 1], limit=2) == (0, None)
