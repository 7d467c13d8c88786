"""The length bias of the panel's verdicts: how often the longer of two answers won a decisive
verdict, with a 95% Wilson interval clustered by prompt (``proportion_interval``). 0.5 is no
bias; a judge that prefers longer answers scores above it."""

from collections.abc import Sequence

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison, ComparisonArrays, comparison_arrays
from chateval.evaluation.systems.proportion_interval import per_prompt, proportion_intervals
from chateval.schema.systems import LengthBias, ProportionInterval


def length_bias(comparisons: Sequence[Comparison]) -> LengthBias:
    """The share of decisive verdicts won by the longer answer, with a 95% interval clustered by
    prompt (0.5 is no bias; a judge that prefers longer answers scores above it)."""
    return length_bias_of(comparison_arrays(comparisons))


def length_bias_of(arrays: ComparisonArrays) -> LengthBias:
    """The length bias of indexed comparisons (``win_rates`` has them indexed already)."""
    decisive = arrays.outcome != 0.5
    unequal = arrays.length_a != arrays.length_b
    used = decisive & unequal
    longer_won = ((arrays.outcome == 1.0) & (arrays.length_a > arrays.length_b)) | (
        (arrays.outcome == 0.0) & (arrays.length_b > arrays.length_a)
    )
    n = int(used.sum())
    share: ProportionInterval | None = None
    if n:
        shape = (len(arrays.prompts), 1)
        column = np.zeros(n, dtype=np.int64)
        prompt = arrays.prompt[used]
        won = per_prompt(prompt, column, longer_won[used].astype(float), shape)
        total = per_prompt(prompt, column, np.ones(n), shape)
        (share,) = proportion_intervals(won, total)
    return {
        "share": share,
        "n": n,
        "longer_won": int((longer_won & used).sum()),
        "equal_lengths": int((decisive & ~unequal).sum()),
        "ties": int((~decisive).sum()),
    }
