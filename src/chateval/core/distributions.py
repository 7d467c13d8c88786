"""A referee's probabilities over one score's values: the data of a soft verdict.

It sits in core because transcripts and the journal carry it; how it is read off a model's
token probabilities is judging/soft.py.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chateval.schema.verdicts import Distribution


@dataclass(frozen=True)
class ScoreDistribution:
    """A referee's probabilities over one score's values.

    ``probabilities`` sums to 1 - ``unmapped``; ``ambiguous`` is the part of it placed by the
    nearest-value approximation (judging/soft.py).
    """

    probabilities: Mapping[int, float]
    unmapped: float = 0.0
    ambiguous: float = 0.0

    @property
    def mapped(self) -> float:
        return sum(self.probabilities.values())

    @property
    def expected(self) -> float | None:
        """The probability-weighted score (over the mapped mass); None when nothing mapped."""
        mass = self.mapped
        if mass <= 0:
            return None
        return sum(value * p for value, p in self.probabilities.items()) / mass

    @property
    def entropy(self) -> float | None:
        """Shannon entropy of the mapped distribution, in bits (0: the referee was certain)."""
        mass = self.mapped
        if mass <= 0:
            return None
        return -sum((p / mass) * math.log2(p / mass) for p in self.probabilities.values() if p > 0) + 0.0

    def as_dict(self) -> Distribution:
        """The record stored in verdicts.jsonl and the journal."""
        expected, entropy = self.expected, self.entropy
        return {
            "probabilities": {str(v): round(p, 6) for v, p in sorted(self.probabilities.items())},
            "expected": None if expected is None else round(expected, 4),
            "entropy": None if entropy is None else round(entropy, 4),
            "unmapped": round(self.unmapped, 6),
            "ambiguous": round(self.ambiguous, 6),
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> "ScoreDistribution":
        return cls(
            {int(v): float(p) for v, p in record["probabilities"].items()},
            float(record.get("unmapped", 0.0)),
            float(record.get("ambiguous", 0.0)),
        )
