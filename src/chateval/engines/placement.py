"""Where a panel's models live on one machine: all at once, or one at a time.

- ``co_resident``: every model is loaded before the debate and stays loaded; on a GPU each
  vLLM engine gets its own share of memory, proportional to its estimated need.
- ``phased``: one model is resident at a time. The scheduler asks the pool for a model's
  backend when a step has requests for it; the pool releases the resident model first. Within a
  step the resident model goes first, so a step costs at most one swap.
- ``auto`` picks co-resident when the estimated needs of all models fit in 80% of the device's
  free memory, phased otherwise.

This module only chooses, from the estimates it is given (``memory_needs``, gathered by
``factory.Engines.plan``); the factory loads what it chose.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from chateval.config.run import RunConfig

PlacementMode = Literal["auto", "co_resident", "phased"]
# The share of free device memory co-resident models may plan to use: the rest is headroom
# for what the estimates leave out (memory_needs: margins, not measurements). Set with
# placement itself (commit 85c8bc8) as a rule of thumb; no measurement is recorded behind it.
_FIT_SHARE = 0.8


@dataclass(frozen=True)
class Placement:
    """The placement a run uses and why (recorded in run.json)."""

    mode: Literal["co_resident", "phased"]
    reason: str
    need_gib: dict[str, float] = field(default_factory=dict)
    free_gib: float | None = None


def choose_placement(mode: PlacementMode, need_gib: Mapping[str, float], free_gib: float) -> Placement:
    """Resolve ``auto`` from the models' needs and the free memory; explicit modes pass through."""
    needs = {m: round(n, 2) for m, n in need_gib.items()}
    total = sum(need_gib.values())
    if mode != "auto":
        return Placement(mode, "set in config", needs, round(free_gib, 2))
    if len(need_gib) <= 1 or total <= _FIT_SHARE * free_gib:
        reason = f"auto: {total:.1f} GiB needed, {free_gib:.1f} GiB free"
        return Placement("co_resident", reason, needs, round(free_gib, 2))
    reason = f"auto: {total:.1f} GiB needed > {_FIT_SHARE:.0%} of {free_gib:.1f} GiB free"
    return Placement("phased", reason, needs, round(free_gib, 2))


def unestimated_placement(mode: PlacementMode, given: bool) -> Placement:
    """The placement where nothing is estimated: no model is loaded here (each is ``given``
    by the caller or served elsewhere), or the caller's own factory loads them. ``auto`` is
    co-resident then: there is nothing to weigh."""
    chosen: Literal["co_resident", "phased"] = "co_resident" if mode == "auto" else mode
    return Placement(chosen, "models supplied by the caller" if given else "set in config")


def memory_shares(need_gib: Mapping[str, float], budget: float) -> dict[str, float]:
    """Split a memory fraction ``budget`` over co-resident models in proportion to their needs."""
    total = sum(need_gib.values()) or 1.0
    return {m: round(budget * n / total, 3) for m, n in need_gib.items()}


def engine_memory_shares(config: RunConfig, placement: Placement, gpu: bool) -> dict[str, float]:
    """The memory share each model's engine is given where the placement sets one: a model's
    ``placement.memory_fractions`` entry, else, for co-resident models on a GPU, vLLM's default
    share split by their estimated needs."""
    shares: dict[str, float] = {}
    if placement.mode == "co_resident" and len(placement.need_gib) > 1 and gpu:
        from chateval.backends.vllm_backend import GPU_MEMORY_FRACTION

        shares = memory_shares(placement.need_gib, GPU_MEMORY_FRACTION)
    return {**shares, **config.placement.memory_fractions}
