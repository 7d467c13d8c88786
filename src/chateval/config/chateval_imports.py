"""The config of ``chateval import`` for ChatEval's own 2023 outputs (``format: chateval_2023``):
the ``pair_comparison_results.json`` its 2023 code (thunlp/ChatEval, ``llm_eval.py``) wrote for
FairEval, once with the answers in the data's order (``calc_score_comparison``) and once with
``--reverse_input`` (``calc_score_comparison_reverse``), read with the 2023 rule
(chateval.judging.verdicts_2023) against the data whose items they judged, in the data's order.

Validated like a run config: unknown keys are errors, and every error names the file and key.
"""

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from chateval.config.data import DataConfig
from chateval.config.run import RUN_NAME_PATTERN
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.strict_model import StrictModel

# The data keys that would change which items there are or in what order: the outputs judged
# the data's items one by one, in its order.
_ORDER_KEYS = ("limit", "labels_file", "compare")


class ChatEvalOutputs(StrictModel):
    """ChatEval's 2023 outputs: the pair_comparison_results.json of each answer order.

    Each is a JSON list with one record per item, `{question, response: {SYSTEM: text},
    evaluation: [{role, evaluation}]}`, each evaluation a referee's last reply."""

    path: Path = Field(
        description="The outputs with the data's answer A shown as Assistant 1 "
        "(`calc_score_comparison/.../pair_comparison_results.json`), relative to the config."
    )
    swapped_path: Path | None = Field(
        default=None,
        description="The outputs of the same panel with the answers swapped, B shown as Assistant 1 "
        "(`--reverse_input`: `calc_score_comparison_reverse/...`); unset: one answer order.",
    )
    first: str = Field(
        default="gpt35",
        description="The key of `response` holding the data's answer A (the 2023 code's gpt35).",
    )
    second: str = Field(
        default="vicuna",
        description="The key of `response` holding the data's answer B (the 2023 code's vicuna).",
    )


class ChatEval2023ImportConfig(StrictModel):
    """A run folder made from ChatEval's own 2023 outputs (`format: chateval_2023`)."""

    name: str = Field(
        default="chateval_2023",
        pattern=RUN_NAME_PATTERN,
        description="The run's name and default folder (runs/NAME).",
    )
    format: Literal["chateval_2023"] = Field(
        description="`chateval_2023`: ChatEval's pair_comparison_results.json, each referee's reply "
        "ending in the lines `The score of Assistant 1: X` and `The score of Assistant 2: Y`."
    )
    model: str = Field(
        description="The model every referee of the outputs was, as reports name it "
        "(e.g. gpt-3.5-turbo-0301)."
    )
    outputs: ChatEvalOutputs = Field(description="The outputs, in one answer order or in both.")
    data: DataConfig = Field(
        description="The items the outputs judged, in their order, with their human labels (as a run "
        "config's `data`, a pairwise format: FairEval's release, `faireval`, or ChatEval's "
        "test.json, `chateval_faireval`); each output's question and answers must be its item's."
    )

    @model_validator(mode="after")
    def _consistent(self) -> "ChatEval2023ImportConfig":
        if self.outputs.first == self.outputs.second:
            raise ValueError(f"outputs.first and outputs.second both name {self.outputs.first!r}")
        if self.data.format in RESPONSES_FORMATS:
            raise ValueError(
                f"data.format: the outputs judged one pair per question in the data's order, so the "
                f"data is a pairwise format (faireval, chateval_faireval, ...), not {self.data.format!r}"
            )
        given = [key for key in _ORDER_KEYS if getattr(self.data, key) is not None]
        given += ["label_fraction"] if self.data.label_fraction < 1.0 else []
        if given:
            raise ValueError(
                f"data.{', data.'.join(given)}: the outputs judged the data's items in its order; "
                "leave these out"
            )
        return self
