"""Every picture of a report has a title of its own (a PNG beside report.md is read alone, not
under its caption), and a win rate's picture says against whom: the field or the baseline (a
systems run's pictures: test_system_pictures.py)."""

from pathlib import Path

from matplotlib.figure import Figure

from chateval.evaluation.settings import StatisticsSettings
from chateval.evaluation.systems.section import systems_metrics
from chateval.reporting import plots
from chateval.reporting.win_rate_plots import bars_picture
from chateval.run.finished import load_finished_run
from tests.support.systems_records import decided_record

RUN_FOLDERS = Path(__file__).parents[1] / "fixtures" / "run_folders"


def _title(figure: Figure) -> str:
    """A figure's title, its lines (wrapped to the figure's width) joined."""
    return " ".join(figure.get_suptitle().split())


def test_a_baseline_runs_win_rates_say_the_baseline() -> None:
    labels = {("x", "p1"): "A", ("x", "p2"): "B", ("y", "p1"): "A", ("y", "p2"): "A"}
    records = [
        decided_record(k, prompt, system, "base", label, "all")
        for k, ((system, prompt), label) in enumerate(labels.items())
    ]
    settings = StatisticsSettings(task="pairwise", scales={"A": (1, 10), "B": (1, 10)}, baseline="base")
    section = systems_metrics(settings, records)
    assert section is not None and section["task"] == "pairwise" and "against_baseline" in section
    picture = bars_picture(section, "win_rates", "run: ")
    assert picture is not None
    assert _title(picture.figure) == "run: Win rate against the baseline base"
    axis = picture.figure.get_axes()[0].get_xlabel()
    assert axis.startswith("win rate against the baseline base (ties half)")


def test_the_agreement_plots_have_titles() -> None:
    pairwise = load_finished_run(RUN_FOLDERS / "first_release")
    figure = plots.referee_agreement([pairwise])
    assert figure is not None and _title(figure) == "Each referee's agreement with humans, and the panel's"
    direct = plots.dimension_correlations([load_finished_run(RUN_FOLDERS / "diagnostics_direct")])
    assert direct is not None and _title(direct) == "Correlation with human scores per dimension"
