"""Placement of a panel's models: co-resident vs phased, the auto choice, and memory shares."""

import json
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.engines.caller_engines import CallerEngines
from chateval.engines.memory_needs import weights_gib
from chateval.engines.placement import Placement, choose_placement, memory_shares
from chateval.engines.pool import ModelPool
from chateval.run.runner import run
from chateval.run.session import open_session
from tests.support.helpers import prompt_dependent, tiny_config
from tests.support.scripted import M1_AND_M2_AGENTS, LoadLog


def test_pool_phased_keeps_one_model_and_orders_resident_first() -> None:
    log = LoadLog()
    pool = ModelPool(["m1", "m2"], lambda m: log(tiny_config(), m), "phased")
    pool.start()
    assert pool.resident() == ["m1"]
    assert pool.order(["m2", "m1"]) == ["m1", "m2"]
    pool.get("m2")
    assert pool.resident() == ["m2"]
    pool.close()
    assert log.events == ["load m1", "close m1", "load m2", "close m2"]
    assert pool.info()["swaps"] == 0 and pool.info()["loads"] == {"m1": 1, "m2": 1}


def test_pool_never_closes_caller_backends() -> None:
    log = LoadLog()
    mine = ScriptedBackend("m1", prompt_dependent)
    pool = ModelPool(["m1", "m2"], lambda m: log(tiny_config(), m), "phased", preloaded={"m1": mine})
    pool.start()
    assert pool.get("m1") is mine and log.events == ["load m2"]
    pool.close()
    assert log.events == ["load m2", "close m2"]


@pytest.mark.parametrize("strategy", ["one_by_one", "simultaneous", "simultaneous_summarizer"])
def test_phased_run_matches_co_resident(strategy: str, tmp_path: Path) -> None:
    outputs = {}
    for mode in ("co_resident", "phased"):
        log = LoadLog()
        config = tiny_config(agents=M1_AND_M2_AGENTS, strategy=strategy, placement={"mode": mode})
        result = run(config, tmp_path / mode, backend_factory=log)
        outputs[mode] = (tmp_path / mode / "verdicts.jsonl").read_text()
        info = result.run_info
        assert info["placement"]["mode"] == mode
        assert info["per_model"]["m1"]["requests"] > 0 and info["per_model"]["m2"]["requests"] > 0
        if mode == "co_resident":
            assert log.events[:2] == ["load m1", "load m2"] and info["placement"]["swaps"] == 0
        else:
            # Never two models loaded at once: every load follows the close of the other.
            loaded: set[str] = set()
            for event in log.events:
                action, model = event.split()
                if action == "load":
                    assert not loaded
                    loaded.add(model)
                else:
                    loaded.discard(model)
            assert info["placement"]["swaps"] == sum(e.startswith("load") for e in log.events) - 2
    assert outputs["co_resident"] == outputs["phased"]


def test_phased_step_swaps_at_most_once(tmp_path: Path) -> None:
    log = LoadLog()
    config = tiny_config(agents=M1_AND_M2_AGENTS, strategy="simultaneous", placement={"mode": "phased"})
    run(config, tmp_path, backend_factory=log, on_step=lambda n, total, k: log.events.append("step"))
    steps = " ".join(log.events).split("step")[1:]
    # Both models speak in each of the 3 steps (talk, assessments, scores); the resident one goes
    # first, so one load a step.
    assert [s.count("load") for s in steps] == [1, 1, 1]


def test_auto_placement_from_memory() -> None:
    assert choose_placement("auto", {"a": 1.0, "b": 1.0}, free_gib=10).mode == "co_resident"
    phased = choose_placement("auto", {"a": 5.0, "b": 5.0}, free_gib=10)
    assert phased.mode == "phased" and "10.0 GiB needed" in phased.reason
    assert choose_placement("auto", {"a": 50.0}, free_gib=10).mode == "co_resident"  # nothing to swap
    assert choose_placement("phased", {"a": 1.0, "b": 1.0}, free_gib=100).mode == "phased"


def test_memory_shares_follow_needs() -> None:
    assert memory_shares({"big": 3.0, "small": 1.0}, 0.8) == {"big": 0.6, "small": 0.2}


def test_weights_estimate_scales_stored_dtype(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 2**20)
    (tmp_path / "config.json").write_text(json.dumps({"dtype": "bfloat16"}))
    assert weights_gib(tmp_path, "float32") == pytest.approx(2 / 1024)
    assert weights_gib(tmp_path, "bfloat16") == pytest.approx(1 / 1024)


def test_a_callers_backends_need_no_registry(tmp_path: Path) -> None:
    """A session whose caller builds its backends (a factory, or every model handed in) reads
    no registry (models_dir holds none) and places them as configured, ``auto`` co-resident."""
    config = tiny_config(agents=M1_AND_M2_AGENTS, models_dir=str(tmp_path))
    built = open_session(config, backend_factory=LoadLog())
    assert isinstance(built.engines, CallerEngines)
    assert built.placement == Placement("co_resident", "set in config")
    assert built.served_by() == {"m1": (config.backend, 1), "m2": (config.backend, 1)}
    handed = open_session(config, {m: ScriptedBackend(m, prompt_dependent) for m in ("m1", "m2")})
    assert isinstance(handed.engines, CallerEngines)
    assert handed.placement == Placement("co_resident", "models supplied by the caller")
    assert handed.served_by() == {"m1": ("scripted", 1), "m2": ("scripted", 1)}
