"""The per-request cost model that prices a sequential run from a measured subset."""

import pytest

from chateval.bench.request_cost import (
    RequestCost,
    TimedRequest,
    fit_per_model,
    fit_request_cost,
    price,
    spread_indices,
)


def timed(prompt: int, generated: int, cost: RequestCost) -> TimedRequest:
    return TimedRequest(prompt, generated, cost.seconds(TimedRequest(prompt, generated)))


def test_fit_recovers_the_costs_that_made_the_timings() -> None:
    truth = RequestCost(0.05, per_computed_prompt_token=0.003, per_generated_token=0.09, r_squared=1)
    measured = [timed(p, g, truth) for p, g in [(700, 64), (40, 64), (90, 20), (35, 12), (300, 50), (60, 64)]]
    fitted = fit_request_cost(measured)
    assert fitted.per_request == pytest.approx(0.05, rel=1e-6)
    assert fitted.per_computed_prompt_token == pytest.approx(0.003, rel=1e-6)
    assert fitted.per_generated_token == pytest.approx(0.09, rel=1e-6)
    assert fitted.r_squared == pytest.approx(1.0)
    # It prices requests it never saw, which plain scaling by request count cannot.
    unseen = [("m", TimedRequest(1200, 64)), ("m", TimedRequest(25, 3))]
    assert price({"m": fitted}, unseen) == pytest.approx(price({"m": truth}, unseen), rel=1e-6)


def test_fit_per_model_fits_each_model_on_its_own_requests() -> None:
    fast = RequestCost(0.0, per_computed_prompt_token=0.001, per_generated_token=0.01, r_squared=1)
    slow = RequestCost(0.0, per_computed_prompt_token=0.004, per_generated_token=0.08, r_squared=1)
    shapes = [(700, 64), (40, 64), (90, 20), (35, 12)]
    measured = [("a", timed(p, g, fast)) for p, g in shapes] + [("b", timed(p, g, slow)) for p, g in shapes]
    costs = fit_per_model(measured)
    assert costs["a"].per_generated_token == pytest.approx(0.01, rel=1e-6)
    assert costs["b"].per_generated_token == pytest.approx(0.08, rel=1e-6)
    assert costs["a"].fitted_on == costs["b"].fitted_on == 4


def test_fit_keeps_costs_non_negative() -> None:
    # Longer prompts that happen to run faster would give a negative prompt cost in a free fit.
    measured = [TimedRequest(100, 10, 1.2), TimedRequest(900, 10, 1.0), TimedRequest(500, 40, 3.9)]
    fitted = fit_request_cost(measured)
    assert min(fitted.per_request, fitted.per_computed_prompt_token, fitted.per_generated_token) >= 0
    assert fitted.r_squared < 1


def test_fit_reports_no_r_squared_when_timings_do_not_vary() -> None:
    fitted = fit_request_cost([TimedRequest(10, 5, 0.5), TimedRequest(20, 5, 0.5), TimedRequest(30, 9, 0.5)])
    assert fitted.r_squared is None and fitted.as_dict()["fitted_on_requests"] == 3


def test_fit_needs_measurements() -> None:
    with pytest.raises(ValueError, match="no measured requests"):
        fit_request_cost([])


@pytest.mark.parametrize(
    ("total", "count", "expected"),
    [(80, 4, [0, 20, 40, 60]), (6, 2, [0, 3]), (5, 5, [0, 1, 2, 3, 4]), (3, 8, [0, 1, 2]), (7, 3, [0, 2, 4])],
)
def test_spread_indices(total: int, count: int, expected: list[int]) -> None:
    assert spread_indices(total, count) == expected
