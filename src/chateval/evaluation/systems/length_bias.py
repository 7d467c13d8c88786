"""The length bias of the panel's verdicts: how often the longer of two answers won a decisive
verdict, with a 95% Wilson interval clustered by prompt (``proportion_interval``). 0.5 is no
bias; a judge that prefers longer answers scores above it."""

from collections.abc import Sequence

import numpy as np
from typing_extensions import TypedDict

from chateval.core.strict_model import record_schema
from chateval.evaluation.systems.comparisons import Comparison, ComparisonArrays, comparison_arrays
from chateval.evaluation.systems.proportion_interval import (
    ProportionInterval,
    per_prompt,
    proportion_intervals,
)


@record_schema
class LengthBias(TypedDict):
    """How often the longer answer won a decisive verdict.

    ``share`` is ``longer_won / n`` over decisive verdicts (not ties) between answers of
    different lengths, None when there are none; ``equal_lengths`` decisive verdicts were left
    out because both answers had the same length, ``ties`` because they decided nothing.
    """

    share: ProportionInterval | None
    n: int
    longer_won: int
    equal_lengths: int
    ties: int


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
