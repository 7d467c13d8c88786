"""Pricing a sequential run from a measured subset with a per-request cost model.

ChatEval's loop sends one request at a time, so each request's wall time is its own cost:
a fixed overhead, plus the prompt tokens the engine computes (those not found in its prefix
cache), plus the tokens it generates. Fitted on the requests ``chateval bench`` timed on a few
items, the model prices every request of the whole workload from its token counts. Scaling by
the number of requests instead assumes the measured items are average, which a handful of
items seldom is (answers, and so turns, differ in length from item to item).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimedRequest:
    """One request's token counts and, when it was measured alone, its wall seconds."""

    computed_prompt_tokens: int
    generated_tokens: int
    seconds: float = 0.0


@dataclass(frozen=True)
class RequestCost:
    """Seconds per request, per computed prompt token and per generated token (all >= 0)."""

    per_request: float
    per_computed_prompt_token: float
    per_generated_token: float
    r_squared: float | None  # None when the timings do not vary (nothing to explain)
    fitted_on: int = 0  # requests

    def seconds(self, request: TimedRequest) -> float:
        """The modelled wall time of one request sent alone."""
        return (
            self.per_request
            + self.per_computed_prompt_token * request.computed_prompt_tokens
            + self.per_generated_token * request.generated_tokens
        )

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "per_request_s": round(self.per_request, 6),
            "per_computed_prompt_token_s": round(self.per_computed_prompt_token, 8),
            "per_generated_token_s": round(self.per_generated_token, 8),
            "r_squared": None if self.r_squared is None else round(self.r_squared, 4),
            "fitted_on_requests": self.fitted_on,
        }


def fit_request_cost(measured: Sequence[TimedRequest]) -> RequestCost:
    """Least-squares fit of the three costs on requests timed one at a time.

    The costs are kept non-negative (a negative cost per token has no meaning and would let
    the model extrapolate below zero on requests unlike the measured ones).
    """
    from scipy.optimize import nnls

    if not measured:
        raise ValueError("no measured requests to fit a cost model on")
    features = np.asarray(
        [[1.0, r.computed_prompt_tokens, r.generated_tokens] for r in measured], dtype=float
    )
    seconds = np.asarray([r.seconds for r in measured], dtype=float)
    # Columns differ in scale by ~1000x; normalise so the solver weighs them alike.
    scale = np.maximum(features.max(axis=0), 1.0)
    coefficients, _ = nnls(features / scale, seconds)
    coefficients = coefficients / scale
    residual = seconds - features @ coefficients
    spread = float(((seconds - seconds.mean()) ** 2).sum())
    r_squared = 1.0 - float((residual**2).sum()) / spread if spread > 0 else None
    per_request, per_prompt, per_generated = (float(c) for c in coefficients)
    return RequestCost(per_request, per_prompt, per_generated, r_squared, len(measured))


def fit_per_model(timed: Iterable[tuple[str, TimedRequest]]) -> dict[str, RequestCost]:
    """One cost model per model name, each fitted on that model's timed requests."""
    by_model: dict[str, list[TimedRequest]] = {}
    for model, request in timed:
        by_model.setdefault(model, []).append(request)
    return {model: fit_request_cost(rows) for model, rows in by_model.items()}


def price(costs: Mapping[str, RequestCost], workload: Iterable[tuple[str, TimedRequest]]) -> float:
    """Modelled seconds of sending every (model, request) of ``workload`` one after another."""
    return sum(costs[model].seconds(request) for model, request in workload)


def spread_indices(total: int, count: int) -> list[int]:
    """``count`` indices spread evenly over ``range(total)``, starting at 0.

    A subset spread over a dataset is closer to its average than its first items, which in
    collected data sets often share a source or a topic.
    """
    count = min(count, total)
    return [i * total // count for i in range(count)]
