"""Win rates against a baseline, raw and length-controlled as AlpacaEval 2 fits them: the point
estimate against an independent maximum-likelihood fit, the length effect taken out, the raw
rate equal to the pair's, and a scripted run with compare: {against: X} in every output."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.systems.against_baseline import (
    INDEPENDENT,
    against_baseline,
    baseline_table,
    lc_win_rate,
)
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.win_rates import win_rates
from chateval.reporting.markdown import write_report
from chateval.run.runner import run
from tests.support.helpers import SAMPLE_SYSTEMS, tiny_config
from tests.support.scripted import soft_checksum_referee

runner = CliRunner()


def _planted(prompts: int, seed: int = 0) -> list[Comparison]:
    """'long' wins when its answer is longer than the baseline's, loses when shorter, but for
    some noise (a length effect that does not separate the outcomes perfectly, where the rate at
    equal length would not be estimable): a pure length effect. 'sharp' wins 70% whatever the
    lengths."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(prompts):
        extra = int(rng.integers(-40, 120))  # mostly longer: its raw rate is above 0.5
        won = 1.0 if extra + rng.normal(0, 60) > 0 else 0.0
        out.append(Comparison(f"p{p}", "long", "base", won, None, 100 + extra, 100))
        sharp = 1.0 if rng.random() < 0.7 else 0.0
        out.append(
            Comparison(f"p{p}", "base", "sharp", 1 - sharp, None, 100, 100 + int(rng.integers(-80, 80)))
        )
    return out


def test_the_point_estimate_is_the_maximum_likelihood_fit() -> None:
    rng = np.random.default_rng(3)
    outcomes = rng.choice([0.0, 0.5, 1.0], size=40, p=[0.3, 0.2, 0.5])
    differences = rng.normal(0, 50, 40).round()
    scale = float(np.std(differences))
    rate, phi, clustered = lc_win_rate(outcomes, differences, np.arange(40).astype(str), scale)
    x = np.tanh(differences / scale)

    def negative_log_likelihood(params: np.ndarray) -> float:
        logits = params[0] + params[1] * x
        return float(-np.sum(outcomes * logits - np.log1p(np.exp(logits))))

    theta, slope = minimize(negative_log_likelihood, np.zeros(2), method="BFGS").x
    assert rate["value"] == pytest.approx(1 / (1 + np.exp(-theta)), abs=1e-4)
    assert phi is not None and phi["value"] == pytest.approx(slope, abs=1e-3)
    assert clustered and rate["ci95"][0] < rate["value"] < rate["ci95"][1]


def test_the_length_effect_is_taken_out_and_the_raw_rate_is_the_pairs() -> None:
    comparisons = _planted(60)
    found = against_baseline(comparisons, "base", win_rates(comparisons))
    assert found is not None and found["baseline"] == "base"
    rows = {row["system"]: row for row in found["rows"]}
    long, sharp = rows["long"], rows["sharp"]
    # 'long' only wins by being longer: its length-controlled rate is far below its raw one.
    assert long["length_coefficient"] is not None and long["length_coefficient"]["value"] > 1
    assert long["lc_win_rate"] is not None and long["lc_win_rate"]["value"] < long["win_rate"]["value"] - 0.1
    assert sharp["lc_win_rate"] is not None
    assert sharp["lc_win_rate"]["value"] == pytest.approx(sharp["win_rate"]["value"], abs=0.1)
    # The raw win rate is the pair's, seen from the system's side.
    (pair,) = [
        p for p in win_rates(comparisons)["pairs"] if {p["system_a"], p["system_b"]} == {"base", "sharp"}
    ]
    assert pair["system_a"] == "base"
    assert sharp["win_rate"]["value"] == pytest.approx(1 - pair["win_rate"]["value"])
    assert sharp["win_rate"]["ci95"] == pytest.approx([1 - x for x in reversed(pair["win_rate"]["ci95"])])
    assert (sharp["wins"], sharp["losses"]) == (pair["losses"], pair["wins"])


def test_few_prompts_are_said_and_no_baseline_gives_nothing() -> None:
    found = against_baseline(_planted(4), "base", win_rates(_planted(4)))
    assert found is not None and "warning" not in found
    assert all(row["interval_method"] == INDEPENDENT for row in found["rows"])
    assert all(row["lc_reason"] == "not estimable from 4 prompts (it needs 8)" for row in found["rows"])
    assert against_baseline(_planted(4), "nobody", win_rates(_planted(4))) is None


def test_a_length_controlled_rate_that_says_nothing_is_not_estimable() -> None:
    """Three prompts: the rate is withheld with its reason, in the table too; a system whose
    answers are always longer than the baseline's has no rate at equal length to report; an
    interval over most of [0, 1] is withheld; 60 prompts with overlapping lengths keep theirs."""
    few = against_baseline(_planted(3), "base", win_rates(_planted(3)))
    assert few is not None
    for row in few["rows"]:
        assert row["lc_win_rate"] is None and "from 3 prompts" in row["lc_reason"]
    table = baseline_table(few)
    assert table is not None and all(row[4] == "not estimable" for row in table.rows)
    assert any("length-controlled not estimable" in note for note in table.notes)
    longer = [Comparison(f"p{p}", "wordy", "base", float(p % 2), None, 150 + p, 100) for p in range(30)]
    (row,) = against_baseline(longer, "base", win_rates(longer))["rows"]  # type: ignore[index]
    assert row["lc_win_rate"] is None
    assert row["lc_reason"].startswith(
        "not estimable: every answer is longer than the baseline's (by 50-79 words)"
    )
    separated = [  # wins exactly when longer: no rate at equal length, however many prompts
        Comparison(f"p{p}", "wordy", "base", float(p % 2), None, 100 + (1 if p % 2 else -1) * (p + 1), 100)
        for p in range(30)
    ]
    (row,) = against_baseline(separated, "base", win_rates(separated))["rows"]  # type: ignore[index]
    assert row["lc_win_rate"] is None and "spans most of [0, 1]" in row["lc_reason"]
    many = against_baseline(_planted(60), "base", win_rates(_planted(60)))
    assert many is not None and all("lc_reason" not in r and r["lc_win_rate"] for r in many["rows"])


@pytest.mark.slow  # a scripted run end to end; the fast tier keeps the statistics' tests
def test_a_run_against_a_baseline_reports_it_everywhere(tmp_path: Path) -> None:
    data = {"format": "jsonl_responses", "path": SAMPLE_SYSTEMS, "compare": {"against": "brief"}}
    run(
        tiny_config(data=data),
        tmp_path,
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)},
    )
    section = json.loads((tmp_path / "metrics.json").read_text())["systems"]["against_baseline"]
    assert section["baseline"] == "brief" and {r["system"] for r in section["rows"]} == {
        "careful",
        "rambling",
    }
    report = write_report([tmp_path], tmp_path / "md").read_text()
    assert "### against the baseline brief" in report and "length-controlled" in report
    exported = runner.invoke(app, ["export", str(tmp_path), "--what", "leaderboard", "--format", "json"])
    rows = {row["system"]: row for row in json.loads(exported.stdout)}
    careful = next(r for r in section["rows"] if r["system"] == "careful")
    assert rows["careful"]["baseline_lc_win_rate"] == (careful["lc_win_rate"] or {}).get("value")
    assert rows["careful"]["baseline_lc_not_estimable"] == careful.get("lc_reason")
    assert rows["brief"]["baseline_win_rate"] is None  # the baseline against itself: nothing


def test_the_length_scale_is_the_systems_length_minus_the_baselines_on_either_side() -> None:
    """The baseline shown first in some comparisons: d is still the system's length minus the
    baseline's, so two comparisons where the system is 100 words longer have no spread."""
    comparisons = [
        Comparison("p1", "sys", "base", 1.0, None, 200, 100),
        Comparison("p2", "base", "sys", 0.0, None, 100, 200),
    ]
    found = against_baseline(comparisons, "base", win_rates(comparisons))
    assert found is not None and found["length_scale"] == 0.0
    assert found["rows"][0]["length_coefficient"] is None  # no spread: no length term
