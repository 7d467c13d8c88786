"""The comparison design of responses data (the ``data`` section's ``compare``): which
systems meet on each prompt, all pairs, against a baseline, K opponents each, or adaptively,
in waves within a budget. chateval.data.designs draws the pairs; run/adaptive.py runs the
adaptive waves.
"""

from pydantic import Field, model_validator

from chateval.core.strict_model import StrictModel

ADAPTIVE_WAVE = 16  # comparisons per adaptive wave unless the config says otherwise


class AdaptiveCompare(StrictModel):
    """The adaptive design: the panel debates the comparisons the ranking is least sure of.

    Its candidates are the all_pairs comparisons; it spends ``budget`` of them in waves, each
    chosen from the verdicts of the waves before it (evaluation/adaptive_design.py).
    """

    budget: int = Field(
        ge=1,
        description="Comparisons to debate in all (each in both answer orders, as usual), the two "
        "seeded waves included; more than the candidates (prompts x pairs) is cut to them.",
    )
    wave: int = Field(
        default=ADAPTIVE_WAVE,
        ge=1,
        description="Comparisons per wave (the seeded first two: one cycle through the systems "
        "each, at most this many). Larger waves batch better on a GPU; smaller ones adapt "
        "sooner.",
    )
    top_k: int | None = Field(
        default=None,
        ge=1,
        description="Stop once the best K systems are told apart from the rest (their order "
        "among themselves need not be); unset: once every adjacent pair of the ranking is. "
        "Fewer than the systems.",
    )


class CompareDesign(StrictModel):
    """Which systems meet on each prompt of responses data: set one key; `all_pairs` sets none.

    ``compare: all_pairs``, ``{against: BASELINE}``, ``{opponents: K}`` (data/designs.py) or
    ``{adaptive: {budget: N}}`` (evaluation/adaptive_design.py, run/adaptive.py).
    """

    against: str | None = Field(
        default=None, description="Each other system against this one (the system as A, the baseline as B)."
    )
    opponents: int | None = Field(
        default=None,
        description="Each system meets K others per prompt, in a seeded balanced design (`data.seed`).",
    )
    adaptive: AdaptiveCompare | None = Field(
        default=None,
        description="Debate only the comparisons that tell the ranking most, in waves, within a "
        "budget (seeded by `data.seed`); the candidates are all_pairs'.",
    )

    @model_validator(mode="after")
    def _one_design(self) -> "CompareDesign":
        given = [k for k in ("against", "opponents", "adaptive") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give one design, not {' and '.join(given)}")
        if self.against is not None and not self.against.strip():
            raise ValueError("against: the baseline system's name is empty")
        if self.opponents is not None and self.opponents < 1:
            raise ValueError(f"opponents: K must be at least 1, got {self.opponents}")
        return self

    @property
    def name(self) -> str:
        """The design's name: all_pairs, against, opponents or adaptive."""
        if self.against is not None:
            return "against"
        if self.adaptive is not None:
            return "adaptive"
        return "opponents" if self.opponents is not None else "all_pairs"
