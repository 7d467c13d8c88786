"""One view of a run's metrics, read by the console summary, report.md and the HTML report.

The task comes from the run (run.json's ``task``, else its config's), never from the keys
metrics.json happens to hold: a ``PairwiseView`` or a ``DirectView``, each reading its task's
metrics (chateval.evaluation.run_metrics) through their types. metrics.json of an earlier
release reaches it in today's shape (chateval.record.migrations, applied by the run folder's
reader); keys a release did not record are read with ``get`` and shown as not recorded. It
gives the renderers rows (agreement per aggregation, correlations per dimension, reference
baselines, the blind vote against the final decision, per-model diagnostics): they only format.
Of a run ``chateval import`` wrote (run.json's ``imported``) it leaves out what its one judge
cannot have and titles objective labels as labels (chateval.reporting.imported_runs).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, TypeVar, cast

from chateval.errors import DataError
from chateval.evaluation.agreement.baselines import BaselineRow, pairwise_baseline_rows
from chateval.evaluation.agreement.correlation_rows import AVERAGE, CorrelationRow, correlation_rows
from chateval.evaluation.diagnostics.text import degenerate_reasons
from chateval.evaluation.measures import (
    Table,
    console_rows,
    measure_lines,
    measure_tables,
)
from chateval.reporting.imported_runs import (
    ImportedRun,
    LabelsKind,
    imported_run,
    imported_table,
    imported_words,
    labelled_table,
    labelled_title,
    measured,
    one_judge_tables,
)
from chateval.run.finished import FinishedRun, load_finished_run
from chateval.schema.agreement import (
    Aggregations,
    DirectAgreement,
    DirectMetrics,
    Interval,
    PairwiseAgreement,
    PairwiseMetrics,
)
from chateval.schema.paired import BlindFinalDirect, BlindFinalPairwise
from chateval.schema.run_info import RunInfo
from chateval.schema.run_metrics import (
    CommonRunMetrics,
    DirectRunMetrics,
    DirectSystemsMetrics,
    PairwiseRunMetrics,
    PairwiseSystems,
)

Side = Literal["blind", "final"]
SIDES: tuple[Side, Side] = ("blind", "final")


@dataclass(frozen=True)
class SoftDistributions:
    """How sure the referees of the soft verdicts were (chateval.evaluation.run_metrics)."""

    scores_read: int
    mean_entropy_bits: float
    mean_ambiguous: float
    mean_unmapped: float


def _distributions(block: PairwiseAgreement | DirectAgreement) -> SoftDistributions | None:
    if "mean_entropy_bits" not in block:
        return None
    return SoftDistributions(
        block["scores_read"], block["mean_entropy_bits"], block["mean_ambiguous"], block["mean_unmapped"]
    )


@dataclass(frozen=True)
class AgreementRow:
    """One aggregation's verdicts (hard or soft) against the human labels or scores."""

    aggregation: str  # "hard" or "soft"
    items_scored: int | None  # None: not recorded (a run of an early release)
    distributions: SoftDistributions | None  # soft verdicts: how sure their referees were


@dataclass(frozen=True)
class PairwiseAgreementRow(AgreementRow):
    tie_share: float | None  # the share of items decided as a tie; None: not recorded
    panel: PairwiseMetrics | None  # None without human labels

    @property
    def accuracy(self) -> Interval | None:
        return self.panel["accuracy"] if self.panel else None

    @property
    def kappa(self) -> Interval | None:
        return self.panel["kappa"] if self.panel else None


@dataclass(frozen=True)
class DirectAgreementRow(AgreementRow):
    panel: DirectMetrics | None  # None without human scores

    @property
    def correlations(self) -> list[CorrelationRow]:
        return correlation_rows(self.panel)

    @property
    def average(self) -> CorrelationRow:
        """The paper's average over the dimensions (spearman and kendall None when there is
        none)."""
        found = [row for row in self.correlations if row.name == AVERAGE]
        return found[0] if found else CorrelationRow(AVERAGE, None, None, None, ())

    @property
    def average_defined(self) -> CorrelationRow | None:
        """The average of the defined dimensions, when some are undefined."""
        return next((row for row in self.correlations if row.is_average and row.name != AVERAGE), None)


@dataclass(frozen=True)
class BlindFinalRow:
    """The referees' blind vote before discussion, or the final decision, on the items that
    have both: accuracy and kappa (pairwise), or average rho and tau (direct; None: undefined)."""

    side: Side
    n: int | None  # None: direct, the average over its dimensions
    first: float | None
    second: float | None


Block = TypeVar("Block", PairwiseAgreement, DirectAgreement)
Row = TypeVar("Row", bound=AgreementRow)


def _aggregation_rows(found: Aggregations[Block] | None, row: Callable[[str, Block], Row]) -> list[Row]:
    """Hard, then soft when read (none: the run wrote no metrics)."""
    if not found:
        return []
    soft = found.get("soft")
    return [row("hard", found["hard"])] + ([row("soft", soft)] if soft else [])


@dataclass(frozen=True)
class _View:
    """What every run's metrics give, whatever the task."""

    metrics: CommonRunMetrics  # empty when the run wrote no metrics.json (the task's class narrows it)
    recorded: bool  # the run wrote metrics.json
    imported: ImportedRun | None = None  # a run ``chateval import`` wrote: another tool's judge

    @property
    def labels_kind(self) -> LabelsKind:
        """What the run's labels are: human, or (an import's) objective right answers."""
        return "human" if self.imported is None else self.imported.labels

    @property
    def labels_name(self) -> str:
        """The run's labels as a title names them ("human labels", or "labels")."""
        return labelled_title("human labels", self.labels_kind)

    @property
    def aggregations(self) -> Sequence[AgreementRow]:
        raise NotImplementedError

    @property
    def has_soft_verdicts(self) -> bool:
        """The run's release scored soft verdicts beside the hard ones (read or not, it says)."""
        return "soft_verdicts" in self.metrics

    @property
    def has_soft(self) -> bool:
        return any(row.aggregation == "soft" for row in self.aggregations)

    @property
    def soft_distributions(self) -> SoftDistributions | None:
        return next((row.distributions for row in self.aggregations if row.aggregation == "soft"), None)

    @property
    def items(self) -> int | None:
        return self.metrics.get("items")

    @property
    def items_scored(self) -> int | None:
        return self.metrics.get("items_scored")

    @property
    def soft_status(self) -> str | None:
        """``"read"``, or why there are no soft verdicts; None: a run before soft verdicts."""
        return self.metrics.get("soft_verdicts")

    @property
    def diagnosed(self) -> bool:
        """The run measured the panel's parroting and cut-off turns (later releases)."""
        return "cut_off" in self.metrics or "parroting" in self.metrics

    def degenerate_reasons(self) -> list[str]:
        return degenerate_reasons(self.metrics)

    @property
    def systems(self) -> PairwiseSystems | DirectSystemsMetrics | None:
        return self.metrics.get("systems")

    def measure_lines(self, in_console_rows: bool = True) -> list[tuple[str, str]]:
        """(title, text) of each line measure the run recorded (chateval.evaluation.measures):
        what report.md, report.html and (``in_console_rows=False``: but those in its run table)
        the console summary show of them, alike. An imported run's lines that measured nothing
        ("-": a debate's diagnostics; "unavailable: ..." and why) are left out."""
        return self._measured(measure_lines(self.metrics, in_console_rows))

    def measure_tables(self) -> list[tuple[str, list[Table]]]:
        """(title, tables) of each table measure the run recorded (the systems judged, the
        per-model diagnostics, ...); an imported judge alone has no per-model block (its figures
        are the panel's), and its objective labels are titled as labels."""
        found = measure_tables(self.metrics)
        if self.imported is None:
            return found
        left_out = one_judge_tables() if self.imported.one_judge else []
        kind = self.labels_kind
        return [
            (title, [labelled_table(imported_table(table), kind) for table in tables])
            for title, tables in found
            if title not in left_out
        ]

    def console_rows(self) -> list[tuple[str, str]]:
        """(label, text) of the measures the console's run table shows as rows, each row worded
        by its measure's ``console_row`` label."""
        return self._measured(console_rows(self.metrics))

    def _measured(self, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """``lines`` without an imported run's that measured nothing, said of its verdicts."""
        if self.imported is None:
            return lines
        return [(title, imported_words(text)) for title, text in lines if measured(text)]


@dataclass(frozen=True)
class PairwiseView(_View):
    """A pairwise run's metrics: ``metrics`` and the rows read from it."""

    metrics: PairwiseRunMetrics
    task: ClassVar[str] = "pairwise"

    @property
    def aggregations(self) -> list[PairwiseAgreementRow]:
        return _aggregation_rows(self.metrics.get("aggregations"), self._row)

    def _row(self, name: str, block: PairwiseAgreement) -> PairwiseAgreementRow:
        found = block.get("items_scored"), _distributions(block), block.get("tie_share"), block.get("panel")
        return PairwiseAgreementRow(name, *found)

    @property
    def panel(self) -> PairwiseMetrics | None:
        """The headline aggregation's agreement."""
        return self.metrics.get("panel")

    @property
    def baseline_rows(self) -> list[BaselineRow]:
        """Always "A", the majority label, a random label (empty: no baselines recorded)."""
        return pairwise_baseline_rows(self.metrics.get("baselines"))

    @property
    def blind_vs_final(self) -> BlindFinalPairwise | None:
        """The blind vote (A) against the final decision (B), paired; None without one."""
        effect = self.metrics.get("debate_effect")
        return effect.get("comparison") if effect else None

    @property
    def blind_final_rows(self) -> list[BlindFinalRow]:
        """Blind vote and final decision, each one's accuracy and kappa on the same items."""
        found = self.blind_vs_final
        if not found:
            return []
        accuracy, kappa = found["accuracy"], found["kappa"]
        return [BlindFinalRow(side, found["n"], accuracy[side], kappa[side]) for side in SIDES]


@dataclass(frozen=True)
class DirectView(_View):
    """A direct run's metrics: ``metrics`` and the rows read from it."""

    metrics: DirectRunMetrics
    task: ClassVar[str] = "direct"

    @property
    def aggregations(self) -> list[DirectAgreementRow]:
        return _aggregation_rows(self.metrics.get("aggregations"), self._row)

    def _row(self, name: str, block: DirectAgreement) -> DirectAgreementRow:
        return DirectAgreementRow(name, block.get("items_scored"), _distributions(block), block.get("panel"))

    @property
    def panel(self) -> DirectMetrics | None:
        """The headline aggregation's correlations."""
        return self.metrics.get("panel")

    @property
    def length_rows(self) -> list[CorrelationRow]:
        """The response length's correlations as a prediction, per dimension and averaged."""
        found = self.metrics.get("baselines")
        return correlation_rows(found.get("response_length") if found else None)

    @property
    def blind_vs_final(self) -> BlindFinalDirect | None:
        """The blind vote (A) against the final decision (B), paired; None without one."""
        effect = self.metrics.get("debate_effect")
        return effect.get("comparison") if effect else None

    @property
    def blind_final_rows(self) -> list[BlindFinalRow]:
        """Blind vote and final decision, each one's average rho and tau on the same items."""
        average = self.blind_vs_final.get("average") if self.blind_vs_final else None
        if not average or "spearman" not in average or "kendall" not in average:
            return []
        rho, tau = average["spearman"], average["kendall"]
        return [BlindFinalRow(side, None, rho[side], tau[side]) for side in SIDES]


MetricsView = PairwiseView | DirectView


def metrics_view(task: str, metrics: Mapping[str, object] | None, info: RunInfo | None = None) -> MetricsView:
    """The view of ``metrics`` (metrics.json as read, or as computed) of a run of ``task``;
    ``info``, its run.json, says whether the run was imported."""
    found = dict(metrics or {})
    imported = imported_run(info)
    # The one place metrics.json's JSON meets its types: the task says which.
    if task == "pairwise":
        return PairwiseView(cast(PairwiseRunMetrics, found), metrics is not None, imported)
    return DirectView(cast(DirectRunMetrics, found), metrics is not None, imported)


def run_view(run: FinishedRun) -> MetricsView:
    return metrics_view(run.task, run.metrics, run.info)


def scored_runs(folders: Sequence[Path]) -> list[FinishedRun]:
    """The finished runs in ``folders`` for a report, each with its metrics.json. A report of a
    run without one (a copy made without it, a file deleted) would show every figure as "-":
    DataError instead, naming each such folder and the rescore that writes it from the
    verdicts, before any file of the report is written."""
    runs = [load_finished_run(folder) for folder in folders]
    unscored = [str(run.folder) for run in runs if run.metrics is None]
    if unscored:
        raise DataError(
            f"{', '.join(unscored)}: no metrics.json; `chateval rescore {' '.join(unscored)}` writes "
            "it from the verdicts (no model runs), then report again"
        )
    return runs
