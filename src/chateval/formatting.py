"""How numbers with intervals are written in the CLI summary and the report."""

from collections.abc import Mapping
from typing import Any


def ci_text(metric: Mapping[str, Any] | None) -> str:
    """A statistic with its 95% interval, ``0.512 [0.400, 0.625]``; ``-`` when absent."""
    if not metric:
        return "-"
    low, high = metric["ci95"]
    return f"{metric['value']:.3f} [{low:.3f}, {high:.3f}]"


def signed_ci(metric: Mapping[str, Any]) -> str:
    """A difference with its interval, signs shown: ``+0.025 [-0.050, +0.100]``."""
    low, high = metric["ci95"]
    return f"{metric['value']:+.3f} [{low:+.3f}, {high:+.3f}]"
