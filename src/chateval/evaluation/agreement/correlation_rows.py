"""A direct run's rank correlations with the human scores as rows: per dimension, then the
paper's average over the dimensions and, when some dimension is undefined, the average of the
defined ones. Read by the reports' agreement tables and the per-model diagnostics."""

from dataclasses import dataclass

from chateval.schema.agreement import AverageCorrelations, CorrelationInterval, DirectMetrics

AVERAGE = "average"


@dataclass(frozen=True)
class CorrelationRow:
    """A dimension's rank correlations with the human scores, or an average of them."""

    name: str  # a dimension, AVERAGE (the paper's), or "average of the defined (...)"
    n: int | None  # None for an average
    spearman: CorrelationInterval | None  # None: an average over no defined dimension
    kendall: CorrelationInterval | None
    covers: tuple[str, ...] | None = None  # an average's dimensions; None: a dimension's row

    @property
    def is_average(self) -> bool:
        return self.covers is not None


def _average_rows(paper: AverageCorrelations, defined: AverageCorrelations | None) -> list[CorrelationRow]:
    """The paper's average, then the one over the defined dimensions (labelled with them)."""
    covers = tuple(paper["dimensions"])
    rows = [CorrelationRow(AVERAGE, None, paper.get("spearman"), paper.get("kendall"), covers)]
    if defined is not None:
        dims = tuple(defined["dimensions"])
        name = f"average of the defined ({', '.join(dims)})"
        rows.append(CorrelationRow(name, None, defined.get("spearman"), defined.get("kendall"), dims))
    return rows


def correlation_rows(metrics: DirectMetrics | None) -> list[CorrelationRow]:
    """Per dimension, then the paper's average and, when some dimension is undefined, the
    average of the defined ones (when there are averages)."""
    if not metrics:
        return []
    rows = [CorrelationRow(d, m["n"], m["spearman"], m["kendall"]) for d, m in metrics["dimensions"].items()]
    if average := metrics.get("average"):
        rows += _average_rows(average, metrics.get("average_defined"))
    return rows
