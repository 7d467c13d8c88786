"""``chateval bench`` with scripted engines: modes, counts, scaling and ratios."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.bench.modes import run_bench
from chateval.errors import ConfigError
from chateval.reporting.summary import print_bench
from tests.support.helpers import asks_for_scores, prompt_text, tiny_config
from tests.support.scripted import SCRIPTED_MODEL, agreeing_on_boiling_point, three_referee_config


def modes(report: dict) -> dict:  # type: ignore[type-arg]
    return {m["mode"]: m for m in report["modes"]}


@pytest.mark.parametrize("backend_class", [ScriptedBackend, StreamingScriptedBackend])
def test_bench_runs_every_mode_on_the_same_workload(backend_class: type) -> None:
    report = run_bench(
        three_referee_config(),
        backends={SCRIPTED_MODEL: backend_class(SCRIPTED_MODEL, agreeing_on_boiling_point)},
        extra_modes=["barrier"],
    )
    by_mode = modes(report)
    assert list(by_mode) == ["scheduled", "limit", "sequential", "barrier"]
    requests = {m["requests"] for m in by_mode.values()}
    assert requests == {6 * 2 * 3 * 4}  # items x orders x agents x (rounds + the verdict's scores)
    assert by_mode["scheduled"]["note"] == (
        "streaming" if backend_class is StreamingScriptedBackend else "step barriers"
    )
    assert by_mode["limit"]["prompt_tokens"] == by_mode["scheduled"]["prompt_tokens"]
    assert report["speedup_scheduled_vs_sequential"] > 0 and report["efficiency_scheduled_vs_limit"] > 0


def test_bench_report_records_the_engine_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "3")
    monkeypatch.setenv("HOME_UNRELATED", "x")
    compiled = three_referee_config().vllm.model_copy(update={"enforce_eager": False})
    overridden = three_referee_config().model_copy(update={"vllm": compiled})
    report = run_bench(
        overridden, backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)}
    )
    assert report["settings"]["vllm"]["enforce_eager"] is False
    assert report["settings"]["prompt_layout"] == "paper"
    assert report["settings"]["transformers"]["kv_store_gib"] == 4.0
    assert report["settings"]["environment"]["VLLM_CPU_KVCACHE_SPACE"] == "3"
    assert "HOME_UNRELATED" not in report["settings"]["environment"]


def test_bench_limit_replays_the_scheduled_requests_in_one_call() -> None:
    backend = ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)
    run_bench(three_referee_config(), backends={SCRIPTED_MODEL: backend})
    # one_by_one: one call per step; each referee's verdict is two steps (assessment, scores).
    scheduled_calls = len(three_referee_config().agents) * (three_referee_config().rounds + 1)
    limit_call = backend.calls[scheduled_calls]
    assert len(limit_call) == sum(len(c) for c in backend.calls[:scheduled_calls])
    assert limit_call == [r for c in backend.calls[:scheduled_calls] for r in c]


def test_bench_prices_a_spread_sequential_subset() -> None:
    backend = ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)
    report = run_bench(three_referee_config(), sequential_items=2, backends={SCRIPTED_MODEL: backend})
    sequential, scheduled = modes(report)["sequential"], modes(report)["scheduled"]
    assert sequential["measured_items"] == [0, 3] and "2 of 6 items (spread)" in sequential["note"]
    # The measured requests are those of items 0 and 3 (both orders), one call each.
    per_item = 2 * len(three_referee_config().agents) * (three_referee_config().rounds + 1)
    assert sequential["measured_requests"] == 2 * per_item
    measured_calls = backend.calls[-2 * per_item :]
    assert all(len(call) == 1 for call in measured_calls)
    asked = {"basil" in prompt_text(c[0]) or "sky looks blue" in prompt_text(c[0]) for c in measured_calls}
    assert asked == {True}  # items 0 and 3 of the samples
    # The estimate prices the scheduled run's requests; plain scaling is kept beside it.
    for key in ("requests", "prompt_tokens", "generated_tokens"):
        assert sequential[key] == scheduled[key]
    assert sequential["seconds_scaled_by_requests"] > 0 and SCRIPTED_MODEL in sequential["cost_model"]


def test_bench_early_stop_reports_savings() -> None:
    report = run_bench(
        three_referee_config(position_calibration=False),
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
        extra_modes=["early_stop"],
    )
    early = modes(report)["early_stop"]
    # 6 debates of 3 referees x (3 rounds + scores) = 72 requests without early stop. With it, two
    # checks (3 assessments + 3 scores each) follow rounds 1 and 2; the agreeing debate stops at
    # the first (3 + 6 requests), the others run all (12 + 12 each).
    assert early["stopped_debates"] == 1 and early["requests_saved"] == 72 - (9 + 5 * 24)
    assert "accuracy" in early["metrics"]


def test_bench_measures_the_earlier_default_beside_the_faithful_one() -> None:
    """compact_scores_first: no persona at each turn, no assessment before the scores."""
    backend = ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)
    report = run_bench(
        three_referee_config(position_calibration=False),
        backends={SCRIPTED_MODEL: backend},
        extra_modes=["scores_first", "hard_only", "compact_scores_first"],
    )
    by_mode = modes(report)
    per_debate = {
        "scheduled": 3 * 4,
        "scores_first": 3 * 3,
        "hard_only": 3 * 4,
        "compact_scores_first": 3 * 3,
    }
    for mode, requests in per_debate.items():
        assert by_mode[mode]["requests"] == 6 * requests
        assert mode == "scheduled" or "accuracy" in by_mode[mode]["metrics"]
    compact_requests = backend.calls[-1]  # the last step of the last mode: the verdicts
    assert all(r.regex and "Evidence" in r.regex and not r.probabilities_of for r in compact_requests)
    scored = [r for call in backend.calls for r in call if asks_for_scores(r)]
    # Scores with probabilities: scheduled (and limit, sequential: the same requests), scores_first.
    assert sum(1 for r in scored if r.probabilities_of) == 4 * 6 * 3
    assert all(
        r.messages[-1].role == "user" and "Speak now" not in r.messages[-1].content for r in compact_requests
    )
    persona = "You look for weaknesses first"
    assert all(persona not in r.messages[-1].content for r in compact_requests)  # brief only in the rules


def test_bench_rejects_unknown_modes() -> None:
    with pytest.raises(ConfigError, match="unknown bench modes"):
        run_bench(
            tiny_config(),
            backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
            extra_modes=["warp"],
        )


def test_sequential_estimate_check_script_reads_a_full_report(tmp_path: Path) -> None:
    report = run_bench(
        three_referee_config(),
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
    )
    sequential = modes(report)["sequential"]
    assert "measured_items" not in sequential and len(sequential["timed_requests"]) == sequential["requests"]
    # A scripted request takes microseconds: its timing must survive the report, not round to 0.
    assert all(seconds > 0 for *_, seconds in sequential["timed_requests"])
    path = tmp_path / "full.json"
    path.write_text(json.dumps(report))
    out = tmp_path / "check.json"
    script = Path(__file__).parents[2] / "scripts" / "check_sequential_estimate.py"
    subprocess.run([sys.executable, str(script), str(path), "--items", "2", "-o", str(out)], check=True)
    checked = json.loads(out.read_text())
    assert checked["items"] == 6
    assert set(checked["2_items"]) == {
        "first_items_scaled_by_requests",
        "spread_items_scaled_by_requests",
        "spread_items_cost_model",
        "every_subset",
    }
    assert checked["2_items"]["every_subset"]["cost_model"]["subsets"] == 15  # 6 choose 2


def test_bench_refuses_to_price_a_model_it_barely_measured() -> None:
    """One item with two referees gives the summarizer's model 4 requests (one summary per
    referee and debate): too few to fit."""
    settings = three_referee_config(
        strategy="simultaneous_summarizer",
        rounds=2,
        summarizer={"model": "other"},
        agents=[{"role": "critic"}, {"role": "editor"}],
    )
    backends = {
        SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point),
        "other": ScriptedBackend("other", agreeing_on_boiling_point),
    }
    with pytest.raises(ConfigError, match="4 requests to model 'other'.*measure more items"):
        run_bench(settings, sequential_items=1, backends=backends)


def test_bench_table_fits_an_80_column_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    report = run_bench(
        three_referee_config(),
        sequential_items=2,
        backends={SCRIPTED_MODEL: ScriptedBackend(SCRIPTED_MODEL, agreeing_on_boiling_point)},
    )
    print_bench(report)
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 80
    table_rows = [
        line.split()[0] for line in printed.splitlines() if line.strip().endswith(tuple("0123456789"))
    ]
    assert {"scheduled", "limit", "sequential"} <= set(table_rows)  # mode names are not shortened
    assert "…" not in printed
    note = f"sequential: {modes(report)['sequential']['note']}"
    assert note in " ".join(printed.split())  # printed under the table, wrapped
