"""A row of the table: a statistic in a setting, the share of its cases whose interval held
the truth and their mean width, as docs/performance.md's table shows it.
"""

import numpy as np

Rows = list[dict[str, object]]


def summarise(
    label: str, setting: str, cases: list[tuple[bool, float]], rows: list[dict[str, object]]
) -> None:
    """Add the row of ``cases`` (whether each interval held the truth, and its width) to ``rows``
    and print it."""
    coverage = float(np.mean([c for c, _ in cases]))
    width = float(np.mean([w for _, w in cases]))
    row = {"statistic": label, "setting": setting, "cases": len(cases), "coverage": coverage, "width": width}
    rows.append(row)
    print(table_line(row), flush=True)


TABLE_HEADER = (
    "| statistic | setting | cases | coverage of 95% CI | mean width |\n| --- | --- | --- | --- | --- |"
)


def table_line(row: dict[str, object]) -> str:
    """A row as docs/performance.md's table shows it."""
    coverage, width = float(row["coverage"]), float(row["width"])  # type: ignore[arg-type]
    return f"| {row['statistic']} | {row['setting']} | {row['cases']} | {coverage:.1%} | {width:.3f} |"
