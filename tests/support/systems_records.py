"""Verdict records of named systems made by hand, for tests of the systems' statistics and
their tables and pictures without a run."""

from typing import Any

from chateval.schema.verdicts import VerdictRecord


def decided_record(number: int, prompt: str, a: str, b: str, label: str, category: str) -> VerdictRecord:
    """A decided comparison whose one referee was sure of its scores (soft: 1, 0.5 or 0)."""
    scores = {"A": (8, 5), "B": (5, 8), "tie": (6, 6)}[label]
    distributions = [{"probabilities": {str(score): 1.0}} for score in scores]
    order = {"swapped": False, "label": label, "referees": [{"agent": "R", "distributions": distributions}]}
    found: dict[str, Any] = {
        "item_id": f"{prompt}:{number}",
        "prompt": prompt,
        "system_a": a,
        "system_b": b,
        "label": label,
        "category": category,
        "words_a": 10,
        "words_b": 12,
        "orders": [order],
    }
    return found  # type: ignore[return-value]
