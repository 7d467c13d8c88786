"""The systems' pictures: group letters that say exactly which systems a board does not tell
apart, and the pictures a systems run gives, built from its metrics.json and verdicts alone
(drawn and checked in a browser by test_html_browser.py)."""

from pathlib import Path

import pytest

from chateval.reporting.referee_plots import position_scores
from chateval.reporting.system_groups import group_letters
from chateval.reporting.system_pictures import systems_pictures
from chateval.run.finished import load_finished_run

SYSTEMS_FOLDER = Path(__file__).parents[1] / "fixtures" / "run_folders" / "systems"


@pytest.mark.parametrize(
    ("resolved", "letters"),
    [
        ([], {"a": "a", "b": "a", "c": "a"}),  # nothing told apart: one group
        ([["a", "b"], ["a", "c"], ["b", "c"]], {"a": "a", "b": "b", "c": "c"}),
        # a above c only: b is told apart from neither, so it shares a letter with each
        ([["a", "c"]], {"a": "a", "b": "ab", "c": "b"}),
    ],
)
def test_systems_share_a_letter_exactly_when_no_difference_is_resolved(
    resolved: list[list[str]], letters: dict[str, str]
) -> None:
    assert group_letters(["a", "b", "c"], resolved) == letters


def test_letters_of_a_long_board_say_every_resolved_pair_and_no_other() -> None:
    systems = [f"s{i:02d}" for i in range(20)]
    # Each system resolved above those 5 or more places below it.
    resolved = [[a, b] for i, a in enumerate(systems) for b in systems[i + 5 :]]
    letters = group_letters(systems, resolved)
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            apart = [a, b] in resolved
            assert apart == (not set(letters[a]) & set(letters[b])), (a, b)


def test_a_systems_run_gives_its_pictures_with_captions_from_its_metrics() -> None:
    run = load_finished_run(SYSTEMS_FOLDER)
    pictures = systems_pictures([run])
    assert [p.name for p in pictures] == ["leaderboard", "win_rate_matrix", "win_rates", "referee_scores"]
    for picture in pictures:
        axes = picture.figure.get_axes()
        assert axes and any(ax.lines or ax.patches or ax.images or ax.collections for ax in axes)
        assert picture.caption.endswith(".") and "\n" not in picture.caption
    # Each with a title of its own (a PNG is read alone), wrapped to its width.
    assert [" ".join(p.figure.get_suptitle().split()) for p in pictures] == [
        "Leaderboard: ratings with 95% intervals",
        "Win rate of each row's system against each column's",
        "Win rate against the field",
        "Scores each referee gave, by the answer's position",
    ]
    assert pictures[2].figure.get_axes()[0].get_xlabel().startswith("win rate against the field (ties half)")
    board = run.metrics["systems"]["leaderboard"]  # type: ignore[index]
    leaderboard = pictures[0]
    assert f"1000 = the anchor, {board['anchor']}" in leaderboard.caption
    assert "circles plain, squares length-controlled" in leaderboard.caption
    ticks = [t.get_text() for t in leaderboard.figure.get_axes()[0].get_yticklabels()]
    ranked = sorted(board["rows"], key=lambda row: row["rank"])
    assert ticks == [
        row["system"] + (" (anchor)" if row["system"] == board["anchor"] else "") for row in ranked
    ]
    # The referees' picture counts every parsed score, by the position it was shown in.
    counts = position_scores(run.verdicts())
    shown = sum(
        r["score_a"] is not None
        for v in run.verdicts()
        for o in v["orders"]
        for r in o["referees"]
        if not r.get("error")
    )
    assert sum(sum(first.values()) for first, _ in counts.values()) == shown


def test_several_runs_draw_their_leaderboards_on_one_axis() -> None:
    runs = [load_finished_run(SYSTEMS_FOLDER), load_finished_run(SYSTEMS_FOLDER)]
    pictures = systems_pictures(runs)
    leaderboard = [p for p in pictures if p.name == "leaderboard"]
    assert len(leaderboard) == 1 and "each run's own anchor at 1000" in leaderboard[0].caption
    assert len(leaderboard[0].figure.get_axes()[0].get_legend_handles_labels()[0]) == 4  # 2 runs x 2 boards
    # The other pictures are each run's own, named by its place in the report.
    assert {p.name for p in pictures} >= {
        "run1_win_rate_matrix",
        "run2_win_rate_matrix",
        "run2_referee_scores",
    }


def test_runs_of_unrelated_systems_get_a_leaderboard_each(tmp_path: Path) -> None:
    """Two runs of the same systems share one axis; a run of other systems gets its own."""
    import json
    import shutil

    other = shutil.copytree(SYSTEMS_FOLDER, tmp_path / "other")
    text = (other / "metrics.json").read_text()
    for name in json.loads(text)["systems"]["win_rates"]["systems"]:
        text = text.replace(f'"{name}"', f'"other-{name}"')  # every system renamed
    (other / "metrics.json").write_text(text)
    same, unrelated = load_finished_run(SYSTEMS_FOLDER), load_finished_run(other)
    shared = [p.name for p in systems_pictures([same, same]) if p.name.startswith("leaderboard")]
    assert shared == ["leaderboard"]
    apart = [p.name for p in systems_pictures([same, unrelated]) if p.name.startswith("leaderboard")]
    assert apart == ["leaderboard_1", "leaderboard_2"]


def test_a_legend_wider_than_its_figure_widens_the_figure_keeping_the_margins() -> None:
    from chateval.reporting.plot_style import Margins, figure, legend_below, text_width

    fig, axes = figure(1, 1, (3.0, 1.0), Margins(left=1.0, right=0.5))
    labels = [f"run {k} (a run name long enough to need room): plain" for k in range(4)]
    for k, label in enumerate(labels):
        axes[0][0].plot([k], [k], label=label)
    legend_below(fig, axes[0][0], 4)
    width = fig.get_size_inches()[0]
    assert width >= 4 * text_width(labels, 8) > 4.5  # was 4.5 inches: 1 + 3 + 0.5
    assert fig.subplotpars.left * width == pytest.approx(1.0)
    assert (1 - fig.subplotpars.right) * width == pytest.approx(0.5)
