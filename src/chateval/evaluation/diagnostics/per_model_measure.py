"""The panel's diagnostics per model, as a registered table measure
(chateval.evaluation.measures) at metrics.json's ``per_model``: each model's agreement with the
panel and with humans, its opinion changes, echoes, recitation and copying (next to their
chance), cut-off turns, empty assessments and scores at the scale's ends
(chateval.evaluation.diagnostics.summary), one row per model (model_rows.py).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from chateval.evaluation.diagnostics.model_rows import PER_MODEL_COLUMNS, per_model_rows
from chateval.evaluation.diagnostics.summary import per_model
from chateval.evaluation.diagnostics.text import COPY_RULE
from chateval.evaluation.measures import Table
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.diagnostics import DirectModelDiagnostics, PairwiseModelDiagnostics
from chateval.schema.verdicts import VerdictRecord

LEGEND = [
    "echoes: utterances repeating the prompt's instructions; recites: utterances repeating 8 words "
    "in a row of the item's question or answers; copies: utterances repeating 8 words in a row of "
    "another referee's; chance: the same tests between referees who had seen none of each other's "
    "words; on another item: the seen referee's verdict on another debate, which nobody copied.",
    " ".join(COPY_RULE.splitlines()),
    "High shares: a panel that repeats instead of judging.",
]


class PerModel:
    """The panel's diagnostics per model (module doc)."""

    name = "per_model"
    title = "per-model diagnostics"
    top_level = True

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> dict[str, PairwiseModelDiagnostics] | dict[str, DirectModelDiagnostics]:
        agents, summarizer, seed, scales = (
            settings.referee_models,
            settings.summarizer_model,
            settings.seed,
            settings.scales,
        )
        if settings.task == "pairwise":
            return per_model("pairwise", records, agents, seed, summarizer, scales)
        return per_model("direct", records, agents, seed, summarizer, scales)

    def tables(self, section: Mapping[str, Any] | None) -> list[Table]:
        rows = [list(row) for row in per_model_rows(section)]
        if not rows:
            return []
        return [Table("by model", list(PER_MODEL_COLUMNS), rows, LEGEND, as_records=True)]


PER_MODEL = PerModel()
