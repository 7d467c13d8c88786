"""The pictures of the systems a report's runs judged, in the order both reports show them:
the leaderboard (every run on one axis; a direct run's mean scores), then per run the win-rate
matrix, the win rates against the field or the baseline, the referees' scores by answer
position, and the win rates per category. report.md saves each as a PNG beside it
(``Picture.name``), the HTML report inlines it as SVG; both print its caption under it."""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chateval.reporting.leaderboard_plots import leaderboard_picture, means_picture
from chateval.reporting.metrics_view import run_view
from chateval.reporting.plot_style import Picture
from chateval.reporting.referee_plots import referee_scores_picture
from chateval.reporting.win_rate_plots import bars_picture, categories_picture, matrix_picture, system_order

if TYPE_CHECKING:
    from chateval.record.finished import FinishedRun


def systems_pictures(runs: Sequence["FinishedRun"]) -> list[Picture]:
    """Every picture the runs' systems give (none for runs that judged no named systems)."""
    found = [leaderboard_picture(runs), means_picture(runs)]
    several = len(runs) > 1
    for k, run in enumerate(runs):
        view = run_view(run)
        section = view.systems
        if not section or section["task"] != "pairwise":
            continue
        # Several runs: a file and a caption of each run's own, told apart by its place.
        stem, prefix = (f"run{k + 1}_", f"{run.name}: ") if several else ("", "")
        found += [
            matrix_picture(section, f"{stem}win_rate_matrix", prefix),
            bars_picture(section, f"{stem}win_rates", prefix),
            referee_scores_picture(run, f"{stem}referee_scores", prefix),
        ]
        if categories := (view.metrics.get("measures") or {}).get("categories"):
            order = system_order(section)
            found.append(categories_picture(categories, order, f"{stem}category_win_rates", prefix))
    return [picture for picture in found if picture is not None]
