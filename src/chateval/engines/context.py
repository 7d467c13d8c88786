"""Context-length pre-flight: make every item fit every model's context before a run starts.

A debate's prompts grow with the discussion, so the bound that matters for an item is its
worst turn: the prompt a referee sees with every visible utterance at its maximum length, plus
the tokens that turn may generate. Items over a model's window are either refused up front
(policy ``fail``) or have their answer texts cut, longest first, with a logged warning (policy
``truncate``) -- never a crash in the middle of a run. An item that carries the turns of a
conversation before the judged one loses its earliest turns first (the prompt says how many).
"""

import concurrent.futures
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from chateval.core.backend import GenerationResult, Keep, TokenCounter
from chateval.core.console_handler import once
from chateval.core.formatting import cut_fields_text
from chateval.core.items import EARLIER_TURNS, DirectItem, Item, PairwiseItem
from chateval.core.transcript import Debate, Utterance
from chateval.debate.panel import Panel
from chateval.errors import DataError

log = logging.getLogger(__name__)

ContextPolicy = Literal["truncate", "fail"]
TRUNCATION_MARK = " [...]"

# Which item fields may be cut, and which end of each is kept. A conversation context keeps
# its end: the last turns are what the response answers.
_CUTTABLE: dict[type, tuple[tuple[str, Keep], ...]] = {
    PairwiseItem: (("answer_a", "start"), ("answer_b", "start")),
    DirectItem: (("response", "start"), ("context", "end")),
}
# A simulated utterance, sized by its max_tokens. Not empty: a reasoned verdict joins its
# assessment and scores with a blank line that an empty assessment would leave out.
_EMPTY = GenerationResult("x", 0, 0, "stop")
_MAX_PASSES = 6  # re-measure after each cut: token counts of joined text are not additive
_REMOTE_COUNTING_THREADS = 16  # items fitted at once when a server counts the tokens


@dataclass(frozen=True)
class Truncation:
    """How one item was cut to fit: tokens per field before and after, and for which model."""

    model: str
    fields: dict[str, tuple[int, int]]


def _drop_earlier_turns(
    panel: Panel, item: PairwiseItem, backend: TokenCounter, needed: int
) -> tuple[PairwiseItem, int]:
    """``item`` without as many of its conversation's first turns as it takes to fit (all of
    them if that is not enough: the answers are cut next), and the tokens it then needs. The
    earliest turns go first: the last ones are what the judged turn follows."""
    while item.earlier and needed > backend.context_window:
        item = replace(item, earlier=item.earlier[1:], earlier_left_out=item.earlier_left_out + 1)
        needed = worst_turn_tokens(panel, item, backend)
    return item, needed


def worst_turn_tokens(panel: Panel, item: Item, backend: TokenCounter) -> int:
    """Upper bound on prompt + completion tokens of any turn of ``item``'s debate.

    The debate is simulated with empty utterances; each visible utterance then adds at most
    the tokens its turn may generate.
    """
    debate = Debate(key=item.id, item=item)
    worst = 0
    for step in panel.plan():
        turns = panel.due(debate, step)
        for turn in turns:
            request = panel.request(debate, turn)
            if request.model != backend.model:
                continue
            visible = panel.visible(debate, turn)
            grown = sum(_max_tokens(panel, u) for u in visible)
            if turn.is_summary and any(u.kind == "summary" for u in visible):
                grown += panel.sampling.summary_max_tokens  # the current summary is shown twice
            if turn.scoring:  # it continues its own assessment
                grown += panel.verdict_format.assessment_max_tokens
            worst = max(worst, backend.count_prompt_tokens(request.messages) + grown + request.max_tokens)
        panel.advance(debate, step, turns, [_EMPTY] * len(turns))
    return worst


def _max_tokens(panel: Panel, utterance: Utterance) -> int:
    if utterance.kind == "summary":
        return panel.sampling.summary_max_tokens
    if utterance.kind == "assessment":
        return panel.verdict_format.assessment_max_tokens
    if utterance.turn.gives_verdict:
        # Shown with its assessment lead ("Scores:") or with the evidence line after it.
        return panel.verdict_format.max_tokens
    return panel.sampling.discussion_max_tokens


def _water_level(lengths: Sequence[int], excess: int) -> int:
    """The largest cap whose cuts (each length down to the cap) remove at least ``excess``."""
    low, high = 0, max(lengths, default=0)
    while low < high:  # removed(cap) shrinks as cap grows: binary search the last cap that works
        cap = (low + high + 1) // 2
        if sum(max(0, n - cap) for n in lengths) >= excess:
            low = cap
        else:
            high = cap - 1
    return low


def _cut(item: Item, backend: TokenCounter, excess: int) -> tuple[Item, dict[str, tuple[int, int]]]:
    fields = _CUTTABLE[type(item)]
    lengths = [backend.count_tokens(getattr(item, name)) for name, _ in fields]
    cap = _water_level(lengths, excess + len(fields) * backend.count_tokens(TRUNCATION_MARK))
    changes: dict[str, str] = {}
    report: dict[str, tuple[int, int]] = {}
    for (name, keep), length in zip(fields, lengths, strict=True):
        if length <= cap:
            continue
        kept = backend.truncate_tokens(getattr(item, name), cap, keep) if cap else ""
        changes[name] = kept + TRUNCATION_MARK if keep == "start" else TRUNCATION_MARK.strip() + " " + kept
        report[name] = (length, cap)
    # mypy checks replace()'s keywords against every field of the Item union; these are str fields.
    return replace(item, **changes), report  # type: ignore[arg-type]


def fit_item(
    panel: Panel, item: Item, backend: TokenCounter, policy: ContextPolicy, source: str
) -> tuple[Item, Truncation | None]:
    """``item`` as it fits ``backend``'s context (cut if the policy allows), and what was cut."""
    window = backend.context_window
    needed = worst_turn_tokens(panel, item, backend)
    if needed <= window:
        return item, None
    where = f"{source}: item {item.id!r}"
    if policy == "fail":
        raise DataError(
            f"{where}: its debate needs up to {needed} tokens but model {backend.model!r} holds "
            f"{window} (context_policy: fail); shorten the item, lower rounds or "
            "sampling.discussion_max_tokens, or set context_policy: truncate"
        )
    original: dict[str, int] = {}
    fitted = item
    if isinstance(item, PairwiseItem) and item.earlier:
        dropped, needed = _drop_earlier_turns(panel, item, backend, needed)
        if dropped.earlier_left_out > item.earlier_left_out:
            original[EARLIER_TURNS] = len(item.earlier)
        fitted = dropped
        if needed <= window:
            return _fitted(where, fitted, original, backend)
    for _ in range(_MAX_PASSES):
        fitted, cut = _cut(fitted, backend, needed - window)
        for name, (before, _after) in cut.items():
            original.setdefault(name, before)
        needed = worst_turn_tokens(panel, fitted, backend)
        if needed <= window:
            return _fitted(where, fitted, original, backend)
        if not cut:
            break
    raise DataError(
        f"{where}: even with its answers cut, a debate turn needs {needed} tokens but model "
        f"{backend.model!r} holds {window}; lower rounds or sampling.discussion_max_tokens, or "
        "shorten the question"
    )


def _fitted(
    where: str, fitted: Item, original: Mapping[str, int], backend: TokenCounter
) -> tuple[Item, Truncation]:
    """``fitted`` with what was cut to get it (logged once per run)."""

    def after(name: str) -> int:
        if name == EARLIER_TURNS:
            return len(fitted.earlier) if isinstance(fitted, PairwiseItem) else 0
        return backend.count_tokens(getattr(fitted, name))

    fields = {name: (before, after(name)) for name, before in original.items()}
    log.warning(
        "%s: cut %s to fit model %r's %d-token context",
        where,
        cut_fields_text(fields),
        backend.model,
        backend.context_window,
        extra=once("truncated", "items cut to fit a model's context (verdicts.jsonl: truncated)"),
    )
    return fitted, Truncation(backend.model, fields)


def fit_items(
    panel: Panel,
    items: Sequence[Item],
    backends: Mapping[str, TokenCounter],
    policy: ContextPolicy,
    source: str,
) -> tuple[list[Item], dict[str, list[Truncation]]]:
    """Every item made to fit every model of the panel; the cuts made, by item id."""

    def fit_one(item: Item) -> tuple[Item, list[Truncation]]:
        cuts = []
        for backend in backends.values():
            item, cut = fit_item(panel, item, backend, policy, source)
            if cut is not None:
                cuts.append(cut)
        return item, cuts

    # A served model without its local tokenizer counts over HTTP, one request per count: the
    # items are fitted side by side then, so the pre-flight waits on the network once, not
    # once per turn of every item. Local tokenizers count at once, in this thread.
    if len(items) > 1 and any(getattr(b, "counts_remotely", False) for b in backends.values()):
        with concurrent.futures.ThreadPoolExecutor(_REMOTE_COUNTING_THREADS) as pool:
            results = list(pool.map(fit_one, items))  # in item order; the first failure raises
    else:
        results = [fit_one(item) for item in items]
    truncations = {item.id: cuts for item, cuts in results if cuts}
    return [item for item, _ in results], truncations
