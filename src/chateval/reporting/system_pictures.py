"""The pictures of the systems a report's runs judged, in the order both reports show them:
the leaderboard (every run that judged some of the same systems on one axis; a direct run's
mean scores), then per run the win-rate
matrix, the win rates against the field or the baseline, the referees' scores by answer
position, and the win rates per category. report.md saves each as a PNG beside it
(``Picture.name``), the HTML report inlines it as SVG; both print its caption under it."""

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chateval.reporting.leaderboard_plots import leaderboard_picture, means_picture
from chateval.reporting.metrics_view import run_view
from chateval.reporting.plot_style import Picture
from chateval.reporting.referee_plots import referee_scores_picture
from chateval.reporting.win_rate_plots import bars_picture, categories_picture, matrix_picture, system_order

if TYPE_CHECKING:
    from chateval.run.finished import FinishedRun


def _systems(run: "FinishedRun") -> set[str]:
    section = run_view(run).systems
    if not section:
        return set()
    if section["task"] == "direct":
        return set(section["scores"]["systems"])
    return set(section["win_rates"]["systems"])


def shared_system_groups(runs: Sequence["FinishedRun"]) -> list[list["FinishedRun"]]:
    """The runs in groups that judged systems in common (in report order): one leaderboard
    axis per group, so that runs of unrelated data (FairEval's models, Topical-Chat's decoding
    methods) do not share rows."""
    groups: list[tuple[set[str], list[FinishedRun]]] = []
    for run in runs:
        names = _systems(run)
        if not names:
            continue  # no named systems: no picture to share
        joined = [g for g in groups if g[0] & names]
        merged = (names.union(*(g[0] for g in joined)), [r for g in joined for r in g[1]] + [run])
        groups = [g for g in groups if g not in joined] + [merged]
    # Report order: each group where its first run stands.
    return sorted((g[1] for g in groups), key=lambda members: min(runs.index(r) for r in members))


def systems_pictures(runs: Sequence["FinishedRun"]) -> list[Picture]:
    """Every picture the runs' systems give (none for runs that judged no named systems)."""
    groups = shared_system_groups(runs)
    found: list[Picture | None] = []
    for g, group in enumerate(groups):
        suffix = f"_{g + 1}" if len(groups) > 1 else ""
        for picture in (leaderboard_picture(group), means_picture(group)):
            named = None if picture is None else dataclasses.replace(picture, name=picture.name + suffix)
            found.append(named)
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
