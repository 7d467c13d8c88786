"""The config of ``chateval import``: where another tool's pairwise verdicts are, how their
records map onto chateval's comparisons (dotted paths, a value map, one answer order or both),
where the right answers come from (human judgments in a file, or an objective label in the
same records), and optionally the data whose texts the comparisons show.

Validated like a run config: unknown keys are errors, and every error names the file and key.
"""

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from chateval.config.data import DataConfig, _text_keys
from chateval.config.files import format_validation_error, read_tree, with_absolute_paths
from chateval.config.run import RUN_NAME_PATTERN
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.strict_model import StrictModel
from chateval.errors import ConfigError

VerdictValue = Literal["A", "B", "tie", "skip"]
LabelValue = Literal["A", "B", "tie"]
# The data keys that choose or label comparisons: an import's judgments choose them, and its
# labels come from ``labels``. (``systems`` and ``compare: {against: X}`` stay: they say which
# way round the comparisons are named, as a run of the same data names them.)
_DESIGN_KEYS = ("labels_file", "limit", "pair")


class RefereeSpec(StrictModel):
    """The judge whose verdicts are imported, as the run folder names it: one referee."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.()-]{0,63}$",
        description="The referee's name in every report (e.g. GPT-4).",
    )
    model: str = Field(description="The model that gave the verdicts, as reports name it (e.g. gpt-4).")


class JudgmentsFile(StrictModel):
    """Another tool's verdicts, a record per comparison, in one answer order or in both.

    Each record compares two systems' answers to a prompt; field names may be dotted paths."""

    path: Path = Field(
        description="The verdicts file (.jsonl, .json, .csv, .parquet), relative to the config."
    )
    prompt: str = Field(default="prompt", description="The field holding the prompt's id.")
    system_a: str = Field(default="system_a", description="The field naming the system whose answer is A.")
    system_b: str = Field(default="system_b", description="The field naming the system whose answer is B.")
    verdict: str = Field(
        default="verdict", description="The field holding the verdict with A's answer shown first."
    )
    swapped_verdict: str | None = Field(
        default=None,
        description="The field holding the verdict with the answers swapped (B's shown first), in "
        "the same terms as `verdict` (MT-Bench's `g2_winner`); unset: one answer order.",
    )
    values: dict[str, VerdictValue] = Field(
        description="Each verdict value mapped to A (A's answer better), B, tie, or skip (the "
        "judge gave no verdict, e.g. MT-Bench's `error`: counted, recorded as a failed verdict)."
    )
    swapped_values: dict[str, VerdictValue] | None = Field(
        default=None,
        description="The swapped verdict's values, where they name positions as shown (`first` "
        "then means B): e.g. {first: B, second: A, tie: tie}; unset: `values` (the swapped "
        "verdict names A and B as the record does, as MT-Bench's g2_winner).",
    )
    turn: str | None = Field(
        default=None, description="The field holding the conversation turn judged; with `turn` below."
    )
    judge: str | None = Field(
        default=None, description="The field naming the judge (MT-Bench: `judge.0`); with `judge` below."
    )

    @field_validator("values", "swapped_values", mode="before")
    @classmethod
    def _values_as_text(cls, value: Any) -> Any:
        return _text_keys(value)

    @field_validator("values", "swapped_values")
    @classmethod
    def _some_verdict(cls, value: dict[str, VerdictValue] | None) -> dict[str, VerdictValue] | None:
        if value is not None and not any(label != "skip" for label in value.values()):
            raise ValueError("map at least one value to A, B or tie")
        return value

    @model_validator(mode="after")
    def _swapped_values_need_the_order(self) -> "JudgmentsFile":
        if self.swapped_values is not None and self.swapped_verdict is None:
            raise ValueError("swapped_values: set swapped_verdict, the field they map")
        return self


class LabelsSource(StrictModel):
    """The right answers: a field of the judgment records, or a file of human judgments.

    A field holds an objective label (as JudgeBench's); a file (MT-Bench's human judgments) is
    joined by prompt and systems, in either order, and several humans' votes on one comparison
    make its label by majority (no majority: tie)."""

    field: str | None = Field(default=None, description="The judgment records' field holding the label.")
    path: Path | None = Field(
        default=None, description="Or: a file of human judgments, relative to the config."
    )
    prompt: str = Field(default="prompt", description="With `path`: the field holding the prompt's id.")
    system_a: str = Field(default="system_a", description="With `path`: the field naming the first system.")
    system_b: str = Field(default="system_b", description="With `path`: the field naming the second system.")
    label: str = Field(default="label", description="With `path`: the field holding the preference.")
    turn: str | None = Field(
        default=None, description="With `path`: the field holding the turn (the import's `turn` is kept)."
    )
    values: dict[str, LabelValue] = Field(
        description="Each label value mapped to A (the first system better), B or tie."
    )
    kind: Literal["human", "objective"] | None = Field(
        default=None,
        description="What the labels are, as reports say it; default: human for a file, objective "
        "for a field.",
    )

    @field_validator("values", mode="before")
    @classmethod
    def _values_as_text(cls, value: Any) -> Any:
        return _text_keys(value)

    @model_validator(mode="after")
    def _one_source(self) -> "LabelsSource":
        if (self.field is None) == (self.path is None):
            raise ValueError("give `field` (in the judgment records) or `path` (a file of labels), not both")
        return self

    @property
    def labels_kind(self) -> Literal["human", "objective"]:
        """What the labels are (``kind``, or its default)."""
        return self.kind or ("human" if self.path is not None else "objective")


class ImportConfig(StrictModel):
    """A run folder made from another tool's pairwise verdicts (`chateval import CONFIG`)."""

    name: str = Field(
        default="imported",
        pattern=RUN_NAME_PATTERN,
        description="The run's name and default folder (runs/NAME).",
    )
    referee: RefereeSpec = Field(description="The judge whose verdicts these are.")
    judgments: JudgmentsFile = Field(description="The verdicts and how to read them.")
    turn: int | None = Field(
        default=None,
        ge=1,
        description="Keep the records of this turn (with `judgments.turn`; default 1 when that is set).",
    )
    judge: str | None = Field(
        default=None, description="Keep the records of this judge (with `judgments.judge`)."
    )
    labels: LabelsSource | None = Field(default=None, description="Where the right answers come from.")
    data: DataConfig | None = Field(
        default=None,
        description="The prompts and answers judged (a responses format, as a run config's `data`); "
        "unset: the comparisons carry ids only.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> "ImportConfig":
        if self.turn is not None and self.judgments.turn is None:
            raise ValueError("turn: set judgments.turn, the field that says each record's turn")
        if self.judge is not None and self.judgments.judge is None:
            raise ValueError("judge: set judgments.judge, the field that names each record's judge")
        if self.labels is not None and self.labels.turn is not None and self.judgments.turn is None:
            raise ValueError("labels.turn: set judgments.turn too, so both keep the same turn")
        if self.data is None:
            return self
        if self.data.format not in RESPONSES_FORMATS:
            raise ValueError(
                f"data.format: the judgments name prompts and systems, so the data is a responses "
                f"format ({', '.join(RESPONSES_FORMATS)}), not {self.data.format!r}"
            )
        given = [key for key in _DESIGN_KEYS if getattr(self.data, key) is not None]
        given += ["label_fraction"] if self.data.label_fraction < 1.0 else []
        design = self.data.design()
        given += ["compare"] if design.opponents is not None or design.adaptive is not None else []
        if given:
            raise ValueError(
                f"data.{', data.'.join(given)}: the judgments choose the comparisons and `labels` "
                "labels them; leave these out (compare: all_pairs or {against: X} only say which "
                "way round each comparison is named)"
            )
        data_turn = self.data.turn or 1
        if data_turn != self.kept_turn:
            raise ValueError(
                f"data.turn is {self.data.turn}, the judgments kept are of turn {self.kept_turn}: "
                "the texts shown must be the turn judged"
            )
        return self

    @property
    def kept_turn(self) -> int:
        """The turn whose judgments are imported (1 unless ``turn`` says)."""
        return self.turn or 1


def _absolute(tree: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """``tree`` with its file paths (judgments, labels, the data's) made absolute."""
    tree = with_absolute_paths(tree, base_dir)
    for section in ("judgments", "labels"):
        holder = tree.get(section)
        path = holder.get("path") if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(path, str) and not Path(path).is_absolute():
            holder["path"] = str((base_dir / path).resolve())
    return tree


def load_import_config(path: Path | str) -> ImportConfig:
    """Read and validate an import config (``extends`` allowed, as for run configs); a
    ConfigError names the file and key."""
    path = Path(path)
    tree = read_tree(path)
    try:
        return ImportConfig.model_validate(_absolute(tree, path.parent))
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(path), exc, ImportConfig)) from None
