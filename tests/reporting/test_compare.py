"""chateval compare: two judges of the same items, their agreement with each other and with the
humans (paired), their leaderboards side by side and where they differ most; every number
checked against the statistics computed on the two runs' records by hand. Scripted runs."""

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.agreement.judges import compare_judges, tau_bounds
from chateval.evaluation.agreement.metrics import pairwise_metrics
from chateval.evaluation.agreement.paired import compare_pairwise_records
from chateval.run.runner import run
from tests.support.helpers import SAMPLE_SYSTEMS, prompt_dependent, read_jsonl, tiny_config
from tests.support.scripted import soft_checksum_referee

runner = CliRunner()
# Scripted runs end to end (0.8 s): the suite's integration tier; the fast tier keeps its 60 s.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_judges(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The systems sample (with its labels file) judged by two scripted referees."""
    root = tmp_path_factory.mktemp("judges")
    data = {
        "format": "jsonl_responses",
        "path": SAMPLE_SYSTEMS,
        "labels_file": {
            "path": "samples/systems_labels.csv",
            "system_a": "first",
            "system_b": "second",
            "label": "preferred",
            "values": {"first": "A", "second": "B", "same": "tie"},
        },
    }
    folders = []
    for name, referee in (("checksum", soft_checksum_referee), ("prompted", prompt_dependent)):
        out = root / name
        run(
            tiny_config(name=name, data=data),
            out,
            backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, referee)},
        )
        folders.append(out)
    return folders[0], folders[1]


def _records(folder: Path) -> list[dict[str, Any]]:
    return read_jsonl(folder / "verdicts.jsonl")


def test_agreement_between_two_judges_and_with_the_humans(two_judges: tuple[Path, Path]) -> None:
    a, b = _records(two_judges[0]), _records(two_judges[1])
    found = compare_judges("pairwise", a, b)  # type: ignore[arg-type]
    labels = [(x["label"], y["label"]) for x, y in zip(a, b, strict=True)]
    assert found["shared"] == found["decided"] == len(a) == 12
    assert found["identical"] == pytest.approx(sum(x == y for x, y in labels) / 12)
    expected = pairwise_metrics([x for x, _ in labels], [y for _, y in labels], 0)
    assert found["between"] == expected
    assert found["humans"] == compare_pairwise_records(a, b)  # type: ignore[arg-type]
    differing = {x["item_id"] for x, y in zip(a, b, strict=True) if x["label"] != y["label"]}
    assert found["differences"] == len(differing)
    assert {d["item_id"] for d in found["most_different"]} <= differing
    gaps = [d["gap"] for d in found["most_different"]]
    assert gaps == sorted(gaps, reverse=True)


def test_the_command_writes_every_table(two_judges: tuple[Path, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", *map(str, two_judges), "-o", str(tmp_path), "--html"])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "compare.md").read_text()
    for heading in (
        "## agreement between the judges",
        "## each against the humans, same items (paired)",
        "## leaderboards side by side: checksum and prompted",
        "## where checksum and prompted differ most",
    ):
        assert heading in markdown
    # The leaderboards' tau is the ranks' tau-b.
    boards = [json.loads((f / "metrics.json").read_text())["systems"]["leaderboard"] for f in two_judges]
    ranks = [{row["system"]: row["rank"] for row in board["rows"]} for board in boards]
    systems = list(ranks[0])
    tau = kendalltau([ranks[0][s] for s in systems], [ranks[1][s] for s in systems]).statistic
    said = "undefined" if tau != tau else f"{tau:.3f}"
    assert f"Kendall's tau-b between the ranks: {said}" in markdown
    # Its bounds: nothing resolved on 4 prompts, so every pair may go either way.
    assert "the judges' tau with unlimited prompts lies in [-1.000, +1.000]" in markdown
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Judges compared</h2>" in page and "<h3>agreement between the judges</h3>" in page


def test_tau_bounds_fix_the_pairs_both_boards_resolve() -> None:
    # 6 pairs: 2 resolved alike (+1 each), 1 resolved opposite (-1), 3 free (-1 to +1).
    assert tau_bounds(6, 2, 1) == pytest.approx([-2 / 6, 4 / 6])
    assert tau_bounds(3, 3, 0) == [1.0, 1.0]  # every pair resolved alike: the orders agree
    assert tau_bounds(10, 0, 0) == [-1.0, 1.0]


def test_runs_that_cannot_be_compared_are_refused(two_judges: tuple[Path, Path], tmp_path: Path) -> None:
    def refused(*folders: Path) -> str:
        result = runner.invoke(app, ["compare", *map(str, folders)])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        return " ".join(result.output.split())

    assert "compare needs at least two run folders" in refused(two_judges[0])
    other = tmp_path / "quickstart_items"
    run(tiny_config(), other, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    assert "they judged no item in common; compare runs of the same data" in refused(two_judges[0], other)


def test_the_console_shows_every_item_id_and_run_name_whole_off_a_terminal(
    two_judges: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CliRunner's output is no terminal, like a CI log: the tables get room, not 80 columns (issue 69)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    result = runner.invoke(app, ["compare", *map(str, two_judges)])
    assert result.exit_code == 0, result.output
    ids = {record["item_id"] for record in _records(two_judges[0])}
    shown = {line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│ p")}
    assert shown and shown <= ids  # each id whole, on one line
    assert "rank in checksum" in result.output and "rank in prompted" in result.output
