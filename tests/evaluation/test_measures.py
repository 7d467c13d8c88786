"""Measures plug in: a toy measure, registered here and in no other file, fills its section of
metrics.json and shows in the console summary, report.md and report.html; the built-in
unanimity measure counts what it says."""

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.diagnostics.unanimity import UNANIMITY
from chateval.evaluation.measures import Table, register_measure, unregister_measure
from chateval.evaluation.settings import StatisticsSettings
from chateval.reporting.html import write_html_report
from chateval.reporting.markdown import write_report
from chateval.reporting.summary import print_summary
from chateval.run.runner import run
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import prompt_dependent, tiny_config


class LongestQuestion:
    """A toy: the item with the most words in its first referee's assessment."""

    name = "toy_longest_assessment"
    title = "toy: longest assessment"

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> dict[str, Any] | None:
        words = {
            r["item_id"]: len(str(r["orders"][0]["referees"][0].get("assessment", "")).split())
            for r in records
        }
        return {"item": max(words, key=lambda i: words[i]), "words": max(words.values())}

    def text(self, section: Mapping[str, Any]) -> str:
        return f"item {section['item']}, {section['words']} words"


@pytest.fixture
def toy() -> Iterator[LongestQuestion]:
    measure = LongestQuestion()
    register_measure(measure)
    yield measure
    unregister_measure(measure.name)


def test_a_registered_measure_reaches_metrics_and_every_report(
    toy: LongestQuestion, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = ScriptedBackend(DEFAULT_MODEL, prompt_dependent)
    result = run(tiny_config(), tmp_path / "run", backends={DEFAULT_MODEL: backend})
    section = json.loads((tmp_path / "run" / "metrics.json").read_text())["measures"][toy.name]
    line = f"{toy.title}: {toy.text(section)}"
    print_summary(result)
    assert f"\n{line}\n" in capsys.readouterr().out
    assert line in write_report([tmp_path / "run"], tmp_path / "md").read_text()
    page = write_html_report([tmp_path / "run"], tmp_path / "html").read_text()
    assert f"<th>{toy.title}</th><td>{toy.text(section)}</td>" in page
    # Unregistered, the recorded section still reads, by its name.
    unregister_measure(toy.name)
    assert (
        f"{toy.name}: recorded by a measure this installation does not have"
        in write_report([tmp_path / "run"], tmp_path / "md2").read_text()
    )


class WordsPerOrder:
    """A toy table measure: each answer order's assessment words, summed over the items."""

    name = "toy_words_per_order"
    title = "toy: words per order"

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> dict[str, Any] | None:
        words = {"in order": 0, "swapped": 0}
        for r in records:
            for order in r["orders"]:
                said = sum(len(str(x.get("assessment", "")).split()) for x in order["referees"])
                words["swapped" if order.get("swapped") else "in order"] += said
        return words

    def tables(self, section: Mapping[str, int] | None) -> list[Table]:
        rows = [[order, str(words)] for order, words in (section or {}).items()]
        return [Table("toy words", ["order", "words"], rows, ["toy note"])]


def test_a_registered_table_measure_reaches_metrics_and_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toy = WordsPerOrder()
    register_measure(toy)
    try:
        backend = ScriptedBackend(DEFAULT_MODEL, prompt_dependent)
        result = run(tiny_config(), tmp_path / "run", backends={DEFAULT_MODEL: backend})
        section = json.loads((tmp_path / "run" / "metrics.json").read_text())["measures"][toy.name]
        assert set(section) == {"in order", "swapped"} and section["in order"] > 0
        print_summary(result)
        out = capsys.readouterr().out
        assert "toy words" in out and "toy note" in out and str(section["swapped"]) in out
        report = write_report([tmp_path / "run"], tmp_path / "md").read_text()
        assert "## Toy: words per order: test" in report and "### toy words" in report
        assert f"| swapped | {section['swapped']} |" in report
        page = write_html_report([tmp_path / "run"], tmp_path / "html").read_text()
        assert "<h3>toy words</h3>" in page and f"<td>swapped</td><td>{section['swapped']}</td>" in page
    finally:
        unregister_measure(toy.name)


def test_a_measure_name_is_taken_once(toy: LongestQuestion) -> None:
    with pytest.raises(ValueError, match="toy_longest_assessment"):
        register_measure(LongestQuestion())


def _pairwise(labels: dict[str, str]) -> VerdictRecord:
    rows = [{"agent": name} for name in labels]
    return {
        "item_id": "x",
        "parse_failures": 0,
        "orders": [{"swapped": False, "label": None, "referees": rows}],
        "referee_labels": labels,
    }  # type: ignore[typeddict-item]


def test_unanimity_counts_items_where_every_referee_agrees() -> None:
    settings = StatisticsSettings(task="pairwise", scales={"A": (1, 10), "B": (1, 10)})
    records = [
        _pairwise({"C": "A", "E": "A"}),
        _pairwise({"C": "A", "E": "B"}),
        _pairwise({"C": "tie", "E": "tie"}),
    ]
    failed = _pairwise({"C": "A"})
    failed["orders"][0]["referees"].append({"agent": "E", "error": "no scores"})
    section = UNANIMITY.compute(settings, [*records, failed])
    assert section == {"items": 3, "unanimous": 2, "share": pytest.approx(2 / 3)}
    assert UNANIMITY.text(section) == "2 of 3 items (67%) with every referee's verdict parsed"
    assert UNANIMITY.compute(settings, [_pairwise({"C": "A"})]) is None  # one referee: nothing to say
    direct = StatisticsSettings(task="direct", scales={"fluency": (1, 3)})
    same = {
        "item_id": "d",
        "parse_failures": 0,
        "referees": [{"agent": "C", "scores": {"fluency": 2}}, {"agent": "E", "scores": {"fluency": 2}}],
    }
    assert UNANIMITY.compute(direct, [same]) == {"items": 1, "unanimous": 1, "share": 1.0}  # type: ignore[list-item]
