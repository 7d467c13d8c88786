"""Per-system means of direct scores, and the paired difference of every two systems on the
prompts both were scored on, each with a seeded percentile bootstrap interval over prompts
(``prompt_bootstrap``): the direct-scoring counterpart of the win rates."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from typing_extensions import TypedDict

from chateval.core.schema.metrics import Interval
from chateval.core.strict_model import record_schema
from chateval.evaluation.bootstrap import N_RESAMPLES, ratio_intervals, resample_counts


@dataclass(frozen=True)
class ScoredResponse:
    """A direct-scoring result: the panel's mean score per dimension for one system's response
    to one prompt."""

    prompt: str
    system: str
    scores: Mapping[str, float]


@record_schema
class SystemMean(TypedDict):
    """One system's mean score on one dimension over the prompts it was scored on."""

    system: str
    dimension: str
    n: int  # prompts
    mean: Interval


@record_schema
class PairedDifference(TypedDict):
    """Mean of ``system_a``'s score minus ``system_b``'s over the prompts both were scored on
    (None when they share none)."""

    system_a: str
    system_b: str
    dimension: str
    n: int  # shared prompts
    difference: Interval | None


@record_schema
class DirectSystems(TypedDict):
    systems: list[str]
    dimensions: list[str]
    prompts: int
    resamples: int
    means: list[SystemMean]
    differences: list[PairedDifference]


def direct_systems(
    rows: Sequence[ScoredResponse],
    systems: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> DirectSystems:
    """Each system's mean score per dimension, and the paired difference of every two systems
    on the prompts both were scored on, with 95% bootstrap intervals over prompts.

    Pairing on shared prompts removes the prompts' own difficulty from the difference, which
    is why it is usually much narrower than the two means' intervals suggest. A dimension a row
    lacks (or a NaN score) leaves that row out of that dimension only. A system scored twice on
    one prompt is an error: a paired difference needs one score per prompt and system.
    """
    if not rows:
        raise ValueError("no scored responses")
    seen = list(dict.fromkeys(row.system for row in rows))
    order = seen if systems is None else list(dict.fromkeys(systems))
    if set(order) != set(seen):
        raise ValueError(
            f"systems given ({', '.join(sorted(order))}) differ from those scored ({', '.join(sorted(seen))})"
        )
    prompts = list(dict.fromkeys(row.prompt for row in rows))
    dimensions = list(dict.fromkeys(d for row in rows for d in row.scores))
    p_index = {p: i for i, p in enumerate(prompts)}
    s_index = {s: i for i, s in enumerate(order)}
    d_index = {d: i for i, d in enumerate(dimensions)}
    values = np.full((len(dimensions), len(prompts), len(order)), np.nan)
    filled = np.zeros((len(prompts), len(order)), dtype=bool)
    for row in rows:
        p, s = p_index[row.prompt], s_index[row.system]
        if filled[p, s]:
            raise ValueError(f"system {row.system!r} is scored twice on prompt {row.prompt!r}")
        filled[p, s] = True
        for dim, score in row.scores.items():
            values[d_index[dim], p, s] = score
    counts = resample_counts(len(prompts), n_resamples, seed)
    pairs = [(i, j) for i in range(len(order)) for j in range(i + 1, len(order))]
    means: list[SystemMean] = []
    differences: list[PairedDifference] = []
    for d, dim in enumerate(dimensions):
        present = ~np.isnan(values[d])
        sums = np.where(present, values[d], 0.0)
        for s, interval in enumerate(ratio_intervals(sums, present.astype(float), counts)):
            n = int(present[:, s].sum())
            if n:
                means.append({"system": order[s], "dimension": dim, "n": n, "mean": interval})
        if not pairs:
            continue
        first, second = np.array(pairs).T
        shared = present[:, first] & present[:, second]
        diff = np.where(shared, values[d][:, first] - values[d][:, second], 0.0)
        for k, interval in enumerate(ratio_intervals(diff, shared.astype(float), counts)):
            n = int(shared[:, k].sum())
            differences.append(
                {
                    "system_a": order[pairs[k][0]],
                    "system_b": order[pairs[k][1]],
                    "dimension": dim,
                    "n": n,
                    "difference": interval if n else None,
                }
            )
    return {
        "systems": order,
        "dimensions": dimensions,
        "prompts": len(prompts),
        "resamples": len(counts),
        "means": means,
        "differences": differences,
    }
