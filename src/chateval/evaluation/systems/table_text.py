"""The words and numbers the systems' tables share: a rating with its interval, a list of
systems, an estimate with its interval."""

from collections.abc import Sequence


def rating_text(rating: float | None, ci95: Sequence[float] = ()) -> str:
    """``1120 [543, 1699]``; the anchor's ``1000 (anchor)``; ``-`` when there is none."""
    if rating is None:
        return "-"
    low, high = ci95
    if low == high == rating:  # the anchor: its rating is fixed, the others' are differences to it
        return f"{rating:.0f} (anchor)"
    return f"{rating:.0f} [{low:.0f}, {high:.0f}]"


def listed(names: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def estimate_text(value: float, interval: list[float] | tuple[float, float]) -> str:
    """``"0.512 [0.401, 0.623]"``: an estimate with its interval."""
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"
