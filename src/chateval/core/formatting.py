"""How numbers with intervals, and an item's cuts, are written in the CLI summary, the log
and the reports."""

from collections.abc import Mapping, Sequence

from chateval.core.items import EARLIER_TURNS
from chateval.schema.agreement import CorrelationInterval, Interval


def ci_text(metric: Interval | CorrelationInterval | None) -> str:
    """A statistic with its 95% interval, ``0.512 [0.400, 0.625]``; ``-`` when absent. An
    undefined correlation reads ``undefined (<reason>)``, a missing interval ``[no interval:
    <reason>]``, and resamples left out as undefined are said after the interval."""
    return _with_interval(metric, "{:.3f}")


def signed_ci(metric: Interval | CorrelationInterval | None) -> str:
    """A difference with its interval, signs shown: ``+0.025 [-0.050, +0.100]``."""
    return _with_interval(metric, "{:+.3f}")


def _with_interval(metric: Interval | CorrelationInterval | None, number: str) -> str:
    if not metric:
        return "-"
    # An Interval has no reason nor resample counts: ``get`` reads them as absent.
    if metric["value"] is None:
        return f"undefined ({metric.get('reason', 'no value')})"
    value = number.format(metric["value"])
    interval = metric.get("ci95")
    if interval is None:
        return f"{value} [no interval: {metric.get('reason', '-')}]"
    low, high = (number.format(x) for x in interval)
    undefined = metric.get("undefined_resamples")
    # The interval then comes from the defined resamples only: say how many were left out.
    left_out = (
        f" ({undefined} of {metric.get('resamples')} resamples undefined, left out)" if undefined else ""
    )
    return f"{value} [{low}, {high}]{left_out}"


def reading(difference: Interval | CorrelationInterval, p_value: float | None = None) -> str:
    """Plain words for a paired difference: does the data support a gap?"""
    if difference.get("value") is None:
        return "undefined"
    interval = difference.get("ci95")
    if interval is None:
        return "no interval"
    low, high = interval
    excludes_zero = low > 0 or high < 0
    if p_value is not None and (p_value < 0.05) != excludes_zero:
        return "borderline (the tests disagree)"
    return "more than noise" if excludes_zero else "within noise"


def percent(share: float | None) -> str:
    """A share as ``12.5%``; ``-`` when absent."""
    return "-" if share is None else f"{100 * share:.1f}%"


def cut_fields_text(fields: Mapping[str, Sequence[int]]) -> str:
    """An item's cuts in words: ``earlier_turns 3->1 turns, answer_a 900->600 tokens``."""
    return ", ".join(
        f"{name} {before}->{after} {'turns' if name == EARLIER_TURNS else 'tokens'}"
        for name, (before, after) in fields.items()
    )
