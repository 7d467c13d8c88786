"""The paper's Topical-Chat average over its four dimensions: undefined when one of them is
(a constant prediction), with that dimension's reason; the average of the defined dimensions
reported apart, labelled with them (chateval.evaluation.agreement.metrics, reporting.metrics_view)."""

from typing import cast

import pytest

from chateval.evaluation.agreement.metrics import direct_metrics
from chateval.record.migrations import metrics_as_today
from chateval.reporting.metrics_view import correlation_rows
from chateval.schema.agreement import DirectMetrics

HUMANS = [1.0, 2.0, 3.0, 4.0, 5.0, 3.0]
PREDICTED = [1.0, 3.0, 2.0, 5.0, 4.0, 3.0]
CONSTANT_ENGAGINGNESS = direct_metrics(
    {d: HUMANS for d in ("naturalness", "coherence", "engagingness", "groundedness")},
    {"naturalness": PREDICTED, "coherence": PREDICTED, "engagingness": [2.0] * 6, "groundedness": PREDICTED},
)


def test_a_constant_dimension_leaves_the_papers_average_undefined() -> None:
    average = CONSTANT_ENGAGINGNESS["average"]
    assert average["dimensions"] == ["naturalness", "coherence", "engagingness", "groundedness"]
    assert average["spearman"]["value"] is None and average["kendall"]["value"] is None
    reason = CONSTANT_ENGAGINGNESS["dimensions"]["engagingness"]["spearman"].get("reason")
    assert reason is not None and reason.startswith("constant prediction")
    assert average["spearman"].get("reason") == f"engagingness: {reason}"
    defined = CONSTANT_ENGAGINGNESS["average_defined"]
    assert defined["dimensions"] == ["naturalness", "coherence", "groundedness"]
    assert defined["left_out"] == {"engagingness": reason}
    rho = CONSTANT_ENGAGINGNESS["dimensions"]["coherence"]["spearman"]["value"]
    assert defined["spearman"]["value"] == pytest.approx(rho)  # three equal dimensions: their mean


def test_reports_label_the_defined_average_with_its_dimensions_and_read_old_ones_so() -> None:
    rows = correlation_rows(CONSTANT_ENGAGINGNESS)
    names = [row.name for row in rows if row.is_average]
    assert names == ["average", "average of the defined (naturalness, coherence, groundedness)"]
    assert rows[4].spearman is not None and rows[4].spearman["value"] is None
    # An earlier release wrote the defined dimensions' average under the paper's name.
    old: DirectMetrics = {
        "dimensions": CONSTANT_ENGAGINGNESS["dimensions"],
        "resampled": "items",
        "average": CONSTANT_ENGAGINGNESS["average_defined"],
    }
    # The run folder's reader gives it today's shape (chateval.record.migrations).
    today = cast(DirectMetrics, metrics_as_today({"panel": old}, "direct")["panel"])
    assert [(row.name, row.covers) for row in correlation_rows(today) if row.is_average] == [
        ("average", ("naturalness", "coherence", "groundedness", "engagingness")),
        (names[1], ("naturalness", "coherence", "groundedness")),
    ]
    paper = correlation_rows(old)[4].spearman
    assert paper is not None and paper["value"] is None and "engagingness" in paper.get("reason", "")
