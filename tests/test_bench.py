"""``chateval bench`` with scripted engines: modes, counts, scaling and ratios."""

import pytest

from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.bench import run_bench
from chateval.errors import ConfigError
from tests.conftest import tiny_config
from tests.test_scheduling import MODEL, agreeing, config


def modes(report: dict) -> dict:  # type: ignore[type-arg]
    return {m["mode"]: m for m in report["modes"]}


@pytest.mark.parametrize("backend_class", [ScriptedBackend, StreamingScriptedBackend])
def test_bench_runs_every_mode_on_the_same_workload(backend_class: type) -> None:
    report = run_bench(config(), backends={MODEL: backend_class(MODEL, agreeing)}, extra_modes=["barrier"])
    by_mode = modes(report)
    assert list(by_mode) == ["scheduled", "limit", "sequential", "barrier"]
    requests = {m["requests"] for m in by_mode.values()}
    assert requests == {6 * 2 * 3 * 3}  # items x orders x agents x rounds
    assert by_mode["scheduled"]["note"] == (
        "streaming" if backend_class is StreamingScriptedBackend else "step barriers"
    )
    assert by_mode["limit"]["prompt_tokens"] == by_mode["scheduled"]["prompt_tokens"]
    assert report["speedup_scheduled_vs_sequential"] > 0 and report["efficiency_scheduled_vs_limit"] > 0


def test_bench_limit_replays_the_scheduled_requests_in_one_call() -> None:
    backend = ScriptedBackend(MODEL, agreeing)
    run_bench(config(), backends={MODEL: backend})
    scheduled_calls = len(config().agents) * config().rounds  # one_by_one: one call per step
    limit_call = backend.calls[scheduled_calls]
    assert len(limit_call) == sum(len(c) for c in backend.calls[:scheduled_calls])
    assert limit_call == [r for c in backend.calls[:scheduled_calls] for r in c]


def test_bench_scales_a_sequential_subset() -> None:
    report = run_bench(config(), sequential_items=2, backends={MODEL: ScriptedBackend(MODEL, agreeing)})
    sequential = modes(report)["sequential"]
    assert sequential["scale"] == 3.0 and "2 of 6 items" in sequential["note"]
    assert sequential["requests"] == modes(report)["scheduled"]["requests"]


def test_bench_early_stop_reports_savings() -> None:
    report = run_bench(
        config(position_calibration=False),
        backends={MODEL: ScriptedBackend(MODEL, agreeing)},
        extra_modes=["early_stop"],
    )
    early = modes(report)["early_stop"]
    assert early["stopped_debates"] == 1 and early["requests_saved"] == 6 - 3 - 5 * 6
    assert "accuracy" in early["metrics"]


def test_bench_rejects_unknown_modes() -> None:
    with pytest.raises(ConfigError, match="unknown bench modes"):
        run_bench(tiny_config(), backends={MODEL: ScriptedBackend(MODEL, agreeing)}, extra_modes=["warp"])
