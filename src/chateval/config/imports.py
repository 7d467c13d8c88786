"""The config of ``chateval import``: where another tool's pairwise verdicts are, how their
records map onto chateval's comparisons (dotted paths; systems named by a field, a constant, the
file's name, or not at all; a value map or a numeric scale, weights, one answer order or both),
where the right answers come from (human judgments in a file, or an objective label in the
same records), and optionally the data whose texts the comparisons show (a responses format,
or a pairwise format read from the same records).

Validated like a run config: unknown keys are errors, and every error names the file and key.
"""

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from chateval.config.data import DataConfig, _text_keys
from chateval.config.files import format_validation_error, read_tree, with_absolute_paths
from chateval.config.run import RUN_NAME_PATTERN
from chateval.config.union_members import validate_member
from chateval.core.choices import DATA_FORMATS, RESPONSES_FORMATS
from chateval.core.strict_model import StrictModel
from chateval.errors import ConfigError

VerdictValue = Literal["A", "B", "tie", "skip"]
LabelValue = Literal["A", "B", "tie"]
# The data keys that choose or label comparisons: an import's judgments choose them, and its
# labels come from ``labels``. (``systems`` and ``compare: {against: X}`` stay: they say which
# way round the comparisons are named, as a run of the same data names them.)
_DESIGN_KEYS = ("labels_file", "limit", "pair")
# The data formats whose items are not pairwise comparisons (an import's pairwise data shows
# the texts of the comparisons judged; ``imported`` holds none).
_NOT_PAIRWISE = ("imported", "jsonl_direct", "table_direct", "topical_chat")


class RefereeSpec(StrictModel):
    """The judge whose verdicts are imported, as the run folder names it: one referee."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.()-]{0,63}$",
        description="The referee's name in every report (e.g. GPT-4).",
    )
    model: str = Field(description="The model that gave the verdicts, as reports name it (e.g. gpt-4).")


class NamedSystem(StrictModel):
    """A system the records do not name in a field: one name for all, or each record's file's.

    ``name``: the same system in every record; ``from_file``: the name of the file each record
    is in, without its suffix."""

    name: str | None = Field(
        default=None, description="This system in every record (Arena-Hard's baseline, e.g. gpt-4-0314)."
    )
    from_file: bool = Field(
        default=False,
        description="The name of the file holding the record, without its suffix (Arena-Hard's "
        "model_judgment/<judge>/<model>.jsonl names the model).",
    )

    @model_validator(mode="after")
    def _one_way(self) -> "NamedSystem":
        if (self.name is not None) == self.from_file:
            raise ValueError("give `name` (one system for every record) or `from_file: true`, not both")
        if self.name is not None and not self.name.strip():
            raise ValueError("name: empty")
        return self


# A field's name, a system named another way, or null: the records name no systems.
SystemSource = str | NamedSystem | None
_SYSTEM_TEXT = (
    "The field naming the system whose answer is {side}; or {{name: X}}: X in every record; "
    "or {{from_file: true}}: the name of the record's file; null (system_a and system_b both): "
    "the records name no systems (JudgeBench's: both answers from one model), and each "
    "comparison is named by its prompt alone."
)


class JudgmentsFile(StrictModel):
    """Another tool's verdicts, a record per comparison, in one answer order or in both.

    Each record compares two answers to a prompt, usually two systems'; field names may be
    dotted paths."""

    path: Path = Field(
        description="The verdicts: a file (.jsonl, .json, .csv, .parquet), a folder of them or a "
        "glob pattern (Arena-Hard's model_judgment/<judge>/*.jsonl), relative to the config."
    )
    prompt: str = Field(default="prompt", description="The field holding the prompt's id.")
    system_a: SystemSource = Field(default="system_a", description=_SYSTEM_TEXT.format(side="A"))
    system_b: SystemSource = Field(default="system_b", description=_SYSTEM_TEXT.format(side="B"))
    verdict: str = Field(
        default="verdict", description="The field holding the verdict with A's answer shown first."
    )
    swapped_verdict: str | None = Field(
        default=None,
        description="The field holding the verdict with the answers swapped (B's shown first), in "
        "the same terms as `verdict` (MT-Bench's `g2_winner`); unset: one answer order.",
    )
    values: dict[str, VerdictValue] = Field(
        default_factory=dict,
        description="Each verdict value mapped to A (A's answer better), B, tie, or skip (the "
        "judge gave no verdict, e.g. MT-Bench's `error`: counted, recorded as a failed verdict). "
        "Required unless `scale` reads the verdicts; with it, the values off the scale.",
    )
    swapped_values: dict[str, VerdictValue] | None = Field(
        default=None,
        description="The swapped verdict's values, where they name positions as shown (`first` "
        "then means B): e.g. {first: B, second: A, tie: tie}; unset: `values` (the swapped "
        "verdict names A and B as the record does, as MT-Bench's g2_winner).",
    )
    scale: tuple[float, float] | None = Field(
        default=None,
        description="A numeric verdict scale, [A's end, B's end] (AlpacaEval's preference: [1, 2], "
        "1 when output_1 is better): a number on it is a verdict for the answer of the nearer end, "
        "a tie at the midpoint (AlpacaEval's discrete win rate), and its position is kept as the "
        "verdict's soft value, A's share of the win (AlpacaEval's win rate averages it; the measure "
        "`verdict_win_rates`). It reads `swapped_verdict` alike, in the record's terms. A value off "
        "the scale is read through `values`.",
    )
    weights: dict[str, float] = Field(
        default_factory=dict,
        description="A weight for verdict values that the source counts more than once (Arena-Hard: "
        "its strong verdicts, e.g. {A>>B: 3, B>>A: 3}); other values weigh 1. Each verdict row "
        "records its weight, and the measure `verdict_win_rates` counts every answer order's "
        "verdict with it, as Arena-Hard's win rate against its baseline.",
    )
    no_verdict: Literal["error", "skip"] = Field(
        default="error",
        description="A verdict field that is null or NaN, or under a null (JudgeBench's decision or "
        "judgment null, Arena-Hard's score or game null, AlpacaEval's preference NaN): an error "
        "naming the record, or `skip`: a verdict the judge did not give, as a value mapped to skip.",
    )
    turn: str | None = Field(
        default=None, description="The field holding the conversation turn judged; with `turn` below."
    )
    judge: str | None = Field(
        default=None, description="The field naming the judge (MT-Bench: `judge.0`); with `judge` below."
    )

    @field_validator("values", "swapped_values", "weights", mode="before")
    @classmethod
    def _values_as_text(cls, value: Any) -> Any:
        return _text_keys(value)

    @field_validator("system_a", "system_b", mode="before")
    @classmethod
    def _system_source(cls, value: Any) -> Any:
        """One clear message for a bad system source (not one per member of the union)."""
        if value is None or isinstance(value, (str, NamedSystem)):
            return value
        expected = "expected a field name, {name: SYSTEM}, {from_file: true} or null"
        if not isinstance(value, dict):
            raise ValueError(f"{expected}, got {value!r}")
        return validate_member(NamedSystem, value)

    @field_validator("swapped_values")
    @classmethod
    def _some_verdict(cls, value: dict[str, VerdictValue] | None) -> dict[str, VerdictValue] | None:
        if value is not None and not any(label != "skip" for label in value.values()):
            raise ValueError("map at least one value to A, B or tie")
        return value

    @field_validator("weights")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [key for key, weight in value.items() if not weight > 0]
        if bad:
            raise ValueError(f"weight of {bad[0]!r}: must be more than 0")
        return value

    @model_validator(mode="after")
    def _verdicts_readable(self) -> "JudgmentsFile":
        if self.swapped_values is not None and self.swapped_verdict is None:
            raise ValueError("swapped_values: set swapped_verdict, the field they map")
        if self.scale is None and not any(label != "skip" for label in self.values.values()):
            raise ValueError("values: map at least one value to A, B or tie (or read numbers with `scale`)")
        if self.scale is not None and self.scale[0] == self.scale[1]:
            raise ValueError(f"scale: A's end and B's end are both {self.scale[0]:g}")
        mapped = set(self.values) | set(self.swapped_values or {})
        unknown = sorted(set(self.weights) - mapped)
        if unknown:
            raise ValueError(f"weights: {', '.join(map(repr, unknown))} not a mapped verdict value")
        if (self.system_a is None) != (self.system_b is None):
            raise ValueError("system_a, system_b: both null (the records name no systems), or neither")
        return self

    @property
    def names_systems(self) -> bool:
        """Whether the comparisons are of named systems (not named by prompt alone)."""
        return self.system_a is not None


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
        description="The prompts and answers judged, as a run config's `data`: a responses format, "
        "or a pairwise format whose items are the comparisons judged (table_pairwise reading "
        "JudgeBench's or AlpacaEval's own records: each judgment is joined to the item whose id is "
        "its prompt when the records name no systems, else to the item of its prompt and "
        "systems; its labels, if any, are the comparisons' unless `labels` is set); unset: the "
        "comparisons carry ids only.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> "ImportConfig":
        if self.turn is not None and self.judgments.turn is None:
            raise ValueError("turn: set judgments.turn, the field that says each record's turn")
        if self.judge is not None and self.judgments.judge is None:
            raise ValueError("judge: set judgments.judge, the field that names each record's judge")
        if self.labels is not None and self.labels.turn is not None and self.judgments.turn is None:
            raise ValueError("labels.turn: set judgments.turn too, so both keep the same turn")
        if self.labels is not None and self.labels.path is not None and not self.judgments.names_systems:
            raise ValueError(
                "labels.path: a labels file is joined by prompt and systems, and the judgments name "
                "no systems; give the label as a field of the judgment records (labels.field)"
            )
        if self.data is None:
            return self
        self._check_data_format(self.data)
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

    def _check_data_format(self, data: DataConfig) -> None:
        """The data is a responses format (comparisons of named systems) or a pairwise format,
        whose own labels are the comparisons' unless ``labels`` says otherwise (then it may not
        map a label field as well)."""
        if data.format in RESPONSES_FORMATS:
            if not self.judgments.names_systems:
                raise ValueError(
                    f"data.format: a responses format ({data.format!r}) builds comparisons of named "
                    "systems, and the judgments name none; read the comparisons' texts with a "
                    "pairwise format (table_pairwise), whose item ids are the judgments' prompts"
                )
            return
        if data.format not in DATA_FORMATS or data.format in _NOT_PAIRWISE:
            raise ValueError(
                f"data.format: the texts of the comparisons judged come from a responses format "
                f"({', '.join(RESPONSES_FORMATS)}) or a pairwise one (table_pairwise, "
                f"jsonl_pairwise), not {data.format!r}"
            )
        if data.fields.label is not None and self.labels is not None:
            raise ValueError(
                "data.fields.label: the right answers come from `labels`; leave the data's label "
                "out, or `labels` (the data's labels are then the comparisons', as human labels)"
            )

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
