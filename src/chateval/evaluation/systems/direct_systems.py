"""Per-system means of direct scores, and the paired difference of every two systems on the
prompts both were scored on, each with a t interval over prompts (``mean_interval``): the
direct-scoring counterpart of the win rates."""

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chateval.evaluation.systems.mean_interval import METHOD, mean_interval
from chateval.schema.systems import DirectSystems, PairedDifference, SystemMean

DEFAULT_BOUNDS = (1, 10)  # a dimension's scale when the caller names none


@dataclass(frozen=True)
class ScoredResponse:
    """A direct-scoring result: the panel's mean score per dimension for one system's response
    to one prompt."""

    prompt: str
    system: str
    scores: Mapping[str, float]


def direct_systems(
    rows: Sequence[ScoredResponse],
    systems: Sequence[str] | None = None,
    scales: Mapping[str, tuple[int, int]] | None = None,
) -> DirectSystems:
    """Each system's mean score per dimension, and the paired difference of every two systems
    on the prompts both were scored on, with 95% t intervals over prompts (``mean_interval``)
    held within each dimension's scale (``scales``; 1-10 where it names none).

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
    means: list[SystemMean] = []
    differences: list[PairedDifference] = []
    for d, dim in enumerate(dimensions):
        low, high = (scales or {}).get(dim, DEFAULT_BOUNDS)
        for s, system in enumerate(order):
            scored = values[d][:, s][~np.isnan(values[d][:, s])]
            if len(scored):
                means.append(
                    {
                        "system": system,
                        "dimension": dim,
                        "n": len(scored),
                        "mean": mean_interval(scored, (low, high)),
                    }
                )
        for i, j in itertools.combinations(range(len(order)), 2):
            gaps = values[d][:, i] - values[d][:, j]
            gaps = gaps[~np.isnan(gaps)]
            differences.append(
                {
                    "system_a": order[i],
                    "system_b": order[j],
                    "dimension": dim,
                    "n": len(gaps),
                    "difference": mean_interval(gaps, (low - high, high - low)) if len(gaps) else None,
                }
            )
    return {
        "systems": order,
        "dimensions": dimensions,
        "prompts": len(prompts),
        "method": METHOD,
        "means": means,
        "differences": differences,
    }
