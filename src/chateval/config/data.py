"""The run config's ``data`` section: where the items come from, how a file's fields map onto
them, and (responses formats) which systems' answers are compared (the comparison design:
``config.designs``). A format is a name in chateval.core.choices' registries, plugins' included.
"""

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from chateval.config.designs import CompareDesign
from chateval.config.union_members import validate_member
from chateval.core.choices import DATA_FORMATS, RESPONSES_FORMATS, data_format_names
from chateval.core.registry import unknown_name
from chateval.core.strict_model import StrictModel

# The built-in responses formats that read files of the user's own: several files (a folder, a
# glob, a mapping system -> file), a questions file and a labels file. (A plugin's format reads
# none of these settings, nor any of `fields` but the category: the config refuses them.)
FILE_RESPONSES_FORMATS = ("jsonl_responses", "table_responses")

# Which `fields` each format reads; setting one a format ignores is refused (no silent no-ops).
FIELDS_READ = {
    "table_pairwise": {"id", "question", "answer_a", "answer_b", "label", "system_a", "system_b", "prompt"},
    "table_direct": {"id", "context", "response", "knowledge"},
    "table_responses": {"prompt", "question", "system", "response"},
}
# Every format reads a category when fields.category names its field.
CATEGORY_FIELD = "category"

SystemFrom = Literal["field", "file", "folder"]

_IDENTITY_LABELS: dict[str, Literal["A", "B", "tie"]] = {"A": "A", "B": "B", "tie": "tie"}


class FieldMap(StrictModel):
    """Which source field holds each item field (generic ``table_*`` formats).

    Pairwise uses id, question, answer_a, answer_b, label and optionally system_a, system_b,
    prompt; direct uses id, context, response, knowledge; responses (``table_responses``) use
    prompt, question, system, response. Unset optional fields are simply not read.
    """

    id: str | None = Field(default=None, description="The id field; unset: the record number is the id.")
    question: str = Field(default="question", description="Pairwise and responses: the question.")
    answer_a: str = Field(default="answer_a", description="Pairwise: the first answer.")
    answer_b: str = Field(default="answer_b", description="Pairwise: the second answer.")
    label: str | None = Field(default=None, description="Pairwise: the human label (mapped by `labels`).")
    system_a: str | None = Field(
        default=None, description="Pairwise: the system that wrote the first answer (with `system_b`)."
    )
    system_b: str | None = Field(
        default=None, description="Pairwise: the system that wrote the second answer (with `system_a`)."
    )
    prompt: str | None = Field(
        default=None,
        description="The id of the prompt a row belongs to; pairwise: optional; responses: unset "
        "reads the field `prompt`.",
    )
    system: str = Field(default="system", description="Responses: the system that wrote the response.")
    context: str = Field(default="context", description="Direct: the conversation so far.")
    response: str = Field(default="response", description="Direct and responses: the response.")
    knowledge: str | None = Field(default=None, description="Direct: an optional fact the response may use.")
    category: str | None = Field(
        default=None,
        description="Any format: the field holding an item's category (FairEval's and MT-Bench's "
        "`category`, AlpacaEval's `dataset`); every figure is then also reported per category.",
    )

    @model_validator(mode="after")
    def _both_systems(self) -> "FieldMap":
        if (self.system_a is None) != (self.system_b is None):
            raise ValueError("fields: map both system_a and system_b, or neither")
        return self


class QuestionsFile(StrictModel):
    """A file of the prompts' questions, for responses files that hold only answers (MT-Bench's
    and Arena-Hard's ``model_answer/<model>.jsonl`` beside ``question.jsonl``)."""

    path: Path = Field(
        description="The questions file (.jsonl, .json, .csv, .parquet), relative to the config."
    )
    prompt: str = Field(
        default="question_id", description="The field holding the prompt's id (matched to the responses')."
    )
    question: str = Field(default="question", description="The field holding the question (may be dotted).")
    category: str | None = Field(
        default=None,
        description="The field holding the prompt's category (MT-Bench's `category`), for figures "
        "per category.",
    )


class LabelsFile(StrictModel):
    """Human pairwise labels for responses data: one row per judged comparison, in either order.

    Each row names a prompt, two systems and which answer the human preferred; it is joined to
    the comparison the design builds for that prompt and pair (flipped when the design puts the
    systems the other way round).
    """

    path: Path = Field(description="The labels file (.jsonl, .json, .csv, .parquet), relative to the config.")
    prompt: str = Field(default="prompt", description="The field holding the prompt's id.")
    system_a: str = Field(default="system_a", description="The field naming the first system.")
    system_b: str = Field(default="system_b", description="The field naming the second system.")
    label: str = Field(default="label", description="The field holding the human preference.")
    values: dict[str, Literal["A", "B", "tie"]] = Field(
        default_factory=lambda: dict(_IDENTITY_LABELS),
        description="The label field's values mapped to A (system_a better), B or tie.",
    )

    @field_validator("values", mode="before")
    @classmethod
    def _values_as_text(cls, value: Any) -> Any:
        return _text_keys(value)


def _text_keys(value: Any) -> Any:
    """``{1: A, 2: B}``: YAML reads bare numbers as numbers; a data file's values are compared
    as text, so the keys are too."""
    if isinstance(value, dict):
        return {str(key): label for key, label in value.items()}
    return value


class DataConfig(StrictModel):
    """Where the items come from, and how to read them."""

    format: str = Field(
        description="jsonl_pairwise, jsonl_direct, faireval, chateval_faireval, topical_chat, "
        "table_pairwise or table_direct; responses (one row per prompt and system): "
        "jsonl_responses, table_responses or faireval_systems; `imported`: the verdicts file "
        "of a run folder `chateval import` wrote without data (nothing to debate)."
    )
    path: Path | dict[str, Path] = Field(
        description="The data file or folder, relative to the config file. Responses formats "
        "(jsonl_responses, table_responses) also take a folder of files, a glob pattern "
        "(`results/*/model_outputs.json`) or a mapping system -> file."
    )
    system_from: SystemFrom | None = Field(
        default=None,
        description="jsonl_responses, table_responses: what names each response's system: a "
        "`field` (fields.system), the `file`'s name without its suffix, or its `folder`'s name. "
        "Default: the mapping's keys when `path` is a mapping, else `field`.",
    )
    questions: QuestionsFile | None = Field(
        default=None,
        description="jsonl_responses, table_responses: a file of the prompts' questions, joined "
        "by prompt id, for answer files that hold no question text (MT-Bench, Arena-Hard).",
    )
    labels_file: LabelsFile | None = Field(
        default=None,
        description="jsonl_responses, table_responses, pairwise: human labels of some comparisons "
        "(prompt, system_a, system_b, label; either order), joined to the comparisons built.",
    )
    limit: int | None = Field(
        default=None, ge=1, description="Use the first N items only (responses formats: the first N prompts)."
    )
    pair: tuple[str, str] | None = Field(
        default=None, description="The two systems to compare in multi-system sources (FairEval)."
    )
    systems: list[str] | None = Field(
        default=None,
        description="Responses formats: the systems to use, in this order; default: every system "
        "in the data, in order of first appearance (faireval_systems: every answer file, by name).",
    )
    compare: Literal["all_pairs"] | CompareDesign | None = Field(
        default=None,
        description="Responses formats, pairwise: the comparisons built per prompt; all_pairs (the "
        "default), {against: BASELINE}, {opponents: K} or {adaptive: {budget: N}}.",
    )
    turn: int | None = Field(
        default=None,
        ge=1,
        description="Responses formats: judge this turn (1 = the first) of multi-turn conversations; "
        "the question and response fields then hold every turn's text as a list (MT-Bench: "
        "questions.question turns, fields.response choices.0.turns), and the turns before it are "
        "quoted to the referees, each system's own replies beside the other's.",
    )
    missing_responses: Literal["error", "skip_prompt"] = Field(
        default="error",
        description="Responses formats: a prompt that lacks a response of some system is an error, "
        "or (skip_prompt) left out with a warning.",
    )
    seed: int = Field(
        default=0,
        description="Seed of the data's random choices: the opponents design, the adaptive design's "
        "seeded waves and ties, and label_fraction's draw (apart from sampling.seed, so a sweep "
        "over sampling seeds judges the same items).",
    )
    label_fraction: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="Keep the human labels (direct: human scores) of only this share of the "
        "labelled items, drawn with `seed`; the others load unlabelled.",
    )
    fields: FieldMap = Field(default=FieldMap(), description="`table_*`: which field holds what.")
    labels: dict[str, Literal["A", "B", "tie"]] = Field(
        default_factory=dict, description="`table_pairwise`: the data's label values mapped to A, B or tie."
    )
    scores: dict[str, str] = Field(
        default_factory=dict,
        description="`table_direct`, responses formats: dimension name -> field holding its "
        "human score (jsonl_responses reads a `scores` mapping).",
    )

    @field_validator("labels", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        return _text_keys(value)

    @field_validator("compare", mode="before")
    @classmethod
    def _design(cls, value: Any) -> Any:
        """One clear message for a bad design (not one per member of the union)."""
        if value is None or isinstance(value, CompareDesign):
            return value
        expected = "expected all_pairs, {against: SYSTEM}, {opponents: K} or {adaptive: {budget: N}}"
        if isinstance(value, str):
            if value != "all_pairs":
                raise ValueError(f"{expected}, got {value!r}")
            return value
        if not isinstance(value, dict):
            raise ValueError(f"{expected}, got {value!r}")
        return validate_member(CompareDesign, value)

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        """A registered format (plugins' included, read from their entry points without
        importing them), so a misspelt one is refused first, before the settings it would read."""
        if value not in DATA_FORMATS and value not in RESPONSES_FORMATS:
            raise ValueError(unknown_name("data format", value, data_format_names()))
        if value in DATA_FORMATS and value in RESPONSES_FORMATS:
            raise ValueError(
                f"data format {value!r} is registered twice: {DATA_FORMATS.origin(value)} and "
                f"{RESPONSES_FORMATS.origin(value)} (a responses format)"
            )
        return value

    @model_validator(mode="after")
    def _settings_read(self) -> "DataConfig":
        """Refuse every setting the format would ignore: a silent no-op looks like it worked."""
        # Fields changed from their defaults (a run folder's config.yaml spells out every one).
        changed = {k for k, v in self.fields if v != FieldMap.model_fields[k].default}
        ignored = sorted(changed - FIELDS_READ.get(self.format, set()) - {CATEGORY_FIELD})
        if ignored:
            hint = (
                "; pairwise human labels on responses data come from data.labels_file"
                if "label" in ignored and self.format in RESPONSES_FORMATS
                else ""
            )
            raise ValueError(
                f"fields.{', fields.'.join(ignored)}: format {self.format!r} does not read "
                f"{'it' if len(ignored) == 1 else 'them'}{hint}"
            )
        if self.labels and self.format != "table_pairwise":
            where = "data.labels_file.values" if self.format in FILE_RESPONSES_FORMATS else "table_pairwise"
            raise ValueError(f"labels: format {self.format!r} reads no label values (see {where})")
        if self.scores and self.format not in ("table_direct", "table_responses"):
            raise ValueError(
                f"scores: format {self.format!r} does not map score fields "
                "(table_direct and table_responses do)"
            )
        own_files = {
            "system_from": self.system_from is not None,
            "questions": self.questions is not None,
            "labels_file": self.labels_file is not None,
            "turn": self.turn is not None,
            "path (a mapping)": isinstance(self.path, dict),
        }
        unread = [key for key, is_set in own_files.items() if is_set]
        if unread and self.format not in FILE_RESPONSES_FORMATS:
            raise ValueError(
                f"{', '.join(unread)}: only the formats {', '.join(FILE_RESPONSES_FORMATS)} read "
                f"them; format {self.format!r} does not"
            )
        if self.turn is not None and self.labels_file is not None:
            raise ValueError(
                "labels_file and turn together are not supported yet: a labels file names no turn, "
                "so the labels of every turn would join the judged one"
            )
        if isinstance(self.path, dict):
            if not self.path:
                raise ValueError("path: the mapping system -> file is empty")
            if self.system_from is not None:
                raise ValueError("system_from: with path a mapping, its keys name the systems")
        if self.system_from in ("file", "folder") and "system" in changed:
            raise ValueError(f"fields.system: the systems are named by their {self.system_from}s")
        return self

    @model_validator(mode="after")
    def _responses_options(self) -> "DataConfig":
        if self.format in RESPONSES_FORMATS:
            if self.pair is not None:
                raise ValueError(
                    f"pair: format {self.format!r} compares systems by `compare`; choose them with `systems`"
                )
            if self.systems is not None and len(set(self.systems)) != len(self.systems):
                raise ValueError(f"systems: a system is named twice in {self.systems}")
            return self
        responses_only = [k for k in ("systems", "compare") if getattr(self, k) is not None]
        if responses_only:
            raise ValueError(
                f"{' and '.join(responses_only)}: only the responses formats "
                f"({', '.join(RESPONSES_FORMATS)}) build comparisons; format {self.format!r} "
                "reads its items as they are"
            )
        return self

    @property
    def file(self) -> Path:
        """The one file or folder ``path`` names, for the formats that read one (validation
        lets only the responses formats take a mapping)."""
        if isinstance(self.path, dict):
            raise TypeError(f"format {self.format!r}: data.path is a mapping, not one file")
        return self.path

    @property
    def source(self) -> str:
        """The data's name in messages: its path, or its mapping's files."""
        if isinstance(self.path, dict):
            files = [str(path) for path in self.path.values()]
            return f"{os.path.commonpath(files) if len(files) > 1 else files[0]} ({len(files)} mapped files)"
        return str(self.path)

    def design(self) -> CompareDesign:
        """The comparison design (all pairs unless ``compare`` says otherwise)."""
        return self.compare if isinstance(self.compare, CompareDesign) else CompareDesign()
