"""The config of ``chateval import`` for direct scores (``task: direct``): another tool's score
of each answer (MT-Bench's single-answer grading: a record per question, model and turn with a
score from 1 to 10, or -1 where the judge's rating could not be read), mapped by dotted paths,
and optionally the data whose texts were scored (and whose human scores, if any, are the right
answers).

Validated like a run config: unknown keys are errors, and every error names the file and key.
"""

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from chateval.config.data import DataConfig
from chateval.config.imports import RefereeSpec
from chateval.config.run import RUN_NAME_PATTERN
from chateval.config.sections import DimensionConfig
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.strict_model import StrictModel

# The data keys that choose or label comparisons: the scores choose the answers here, and a
# direct run's right answers are human scores (data.scores), not pairwise labels.
_DESIGN_KEYS = ("labels_file", "limit", "pair", "compare")


class ScoresFile(StrictModel):
    """Another tool's scores, a record per answer: one system's response to one prompt.

    Field names may be dotted paths into nested records."""

    path: Path = Field(description="The scores file (.jsonl, .json, .csv, .parquet), relative to the config.")
    prompt: str = Field(
        default="prompt", description="The field holding the prompt's id (MT-Bench: question_id)."
    )
    system: str = Field(default="system", description="The field naming the system scored (MT-Bench: model).")
    score: str = Field(default="score", description="The field holding the score, a number.")
    failed: list[float] = Field(
        default_factory=list,
        description="Score values that mean the judge gave none (MT-Bench: [-1], a rating FastChat "
        "could not read): counted, recorded as a failed verdict, and left out of the means.",
    )
    turn: str | None = Field(
        default=None, description="The field holding the conversation turn scored; with `turn` below."
    )
    judge: str | None = Field(
        default=None, description="The field naming the judge (MT-Bench: `judge.0`); with `judge` below."
    )


def _default_dimension() -> DimensionConfig:
    return DimensionConfig(name="score", description="the judge's score of the answer", low=1, high=10)


class DirectImportConfig(StrictModel):
    """A direct-scoring run folder made from another tool's scores (`task: direct`)."""

    name: str = Field(
        default="imported",
        pattern=RUN_NAME_PATTERN,
        description="The run's name and default folder (runs/NAME).",
    )
    task: Literal["direct"] = Field(
        description="`direct`: each record scores one answer (single grading), no pairs."
    )
    referee: RefereeSpec = Field(description="The judge whose scores these are.")
    scores: ScoresFile = Field(description="The scores and how to read them.")
    dimension: DimensionConfig = Field(
        default_factory=_default_dimension,
        description="The one dimension the scores are of, with its scale (default: `score`, 1 to "
        "10, MT-Bench's); a score outside the scale is refused.",
    )
    turn: int | None = Field(
        default=None,
        ge=1,
        description="Keep the records of this turn (with `scores.turn`; default 1 when that is set).",
    )
    judge: str | None = Field(
        default=None, description="Keep the records of this judge (with `scores.judge`)."
    )
    data: DataConfig | None = Field(
        default=None,
        description="The prompts and answers scored (a responses format, as a run config's `data`; "
        "its `scores` are the human scores the judge is measured against); unset: the answers "
        "carry ids only.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> "DirectImportConfig":
        if self.turn is not None and self.scores.turn is None:
            raise ValueError("turn: set scores.turn, the field that says each record's turn")
        if self.judge is not None and self.scores.judge is None:
            raise ValueError("judge: set scores.judge, the field that names each record's judge")
        if self.data is None:
            return self
        if self.data.format not in RESPONSES_FORMATS:
            raise ValueError(
                f"data.format: the scores name prompts and systems, so the data is a responses "
                f"format ({', '.join(RESPONSES_FORMATS)}), not {self.data.format!r}"
            )
        given = [key for key in _DESIGN_KEYS if getattr(self.data, key) is not None]
        given += ["label_fraction"] if self.data.label_fraction < 1.0 else []
        if given:
            raise ValueError(
                f"data.{', data.'.join(given)}: the scores choose the answers and the data's "
                "`scores` are their human scores; leave these out"
            )
        if (self.data.turn or 1) != self.kept_turn:
            raise ValueError(
                f"data.turn is {self.data.turn}, the scores kept are of turn {self.kept_turn}: "
                "the texts shown must be the turn scored"
            )
        return self

    @property
    def kept_turn(self) -> int:
        """The turn whose scores are imported (1 unless ``turn`` says)."""
        return self.turn or 1
