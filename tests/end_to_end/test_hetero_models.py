"""Heterogeneous panels with two real model families: SmolLM2-135M and Gemma 3 270M.

Co-resident: both vLLM engines loaded once per session, one strategy (the summarizer's: three
speakers; every strategy runs on real models in tests/end_to_end/test_real_models.py, and a
panel's mix of models does not change how a strategy schedules its turns). Phased: the run loads
and releases the models itself, one resident at a time (on transformers, and on vLLM, whose
loads cost tens of seconds each on 2 cores). The vLLM one runs the docs'
heterogeneous quickstart through the CLI cut off from the network where this machine allows it
(tests/support/cut_off.py): vLLM's part of the proof that nothing leaves the machine, with two
engines loaded, released and loaded again (tests/end_to_end/test_nothing_leaves.py).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.cut_off import outbound, run_cut_off, unavailable
from tests.support.helpers import CONFIGS_DIR, ROOT, SECOND_MODEL, tiny_config

pytestmark = pytest.mark.slow


def hetero_config(**overrides: object):  # noqa: ANN201
    return tiny_config(
        agents=[
            {"role": "critic", "model": DEFAULT_MODEL},
            {"role": "everyday_reader", "model": SECOND_MODEL},
        ],
        opinion_probes=True,
        **overrides,
    )


def check(result_info: dict, outdir: Path) -> None:  # type: ignore[type-arg]
    assert result_info["verdict_parse_failures"] == 0
    per_model = result_info["per_model"]
    assert per_model[DEFAULT_MODEL]["requests"] > 0 and per_model[SECOND_MODEL]["requests"] > 0
    metrics = json.loads((outdir / "metrics.json").read_text())
    assert set(metrics["per_model"]) == {DEFAULT_MODEL, SECOND_MODEL}
    for diagnostics in metrics["per_model"].values():
        assert diagnostics["opinion_changes"]["referee_debates"] > 0
    # SmolLM2's template would add its own system prompt (replaced by an empty one); Gemma's adds none.
    models = json.loads((outdir / "roster.json").read_text())["models"]
    assert models[DEFAULT_MODEL]["replaced_system_prompt"].startswith(
        "You are a helpful AI assistant named SmolLM"
    )
    assert models[SECOND_MODEL]["replaced_system_prompt"] is None


def test_co_resident_vllm_panel(vllm_backend: Backend, second_vllm_backend: Backend, tmp_path: Path) -> None:
    backends = {DEFAULT_MODEL: vllm_backend, SECOND_MODEL: second_vllm_backend}
    # One item (both its answer orders): the two engines serve every step of it; more items
    # would only repeat the same steps (Gemma's decoding is the slow part on two cores).
    one_item = {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1}
    config = hetero_config(strategy="simultaneous_summarizer", data=one_item)
    result = run(config, tmp_path, backends=backends)
    assert result.run_info["placement"]["mode"] == "co_resident"
    check(result.run_info, tmp_path)


def test_phased_transformers_panel(second_model: str, tmp_path: Path) -> None:
    # Scores-first verdicts: fewer steps, so fewer model swaps; reasoned verdicts of both models
    # are tested co-resident above. Phased swaps do not depend on the strategy (each model
    # load is 30 s of the suite): the summarizer strategy, whose summaries add a third speaker.
    # One item (its two answer orders): transformers decodes slowly on two cores, and the
    # swaps are the same for one item as for many.
    config = hetero_config(
        strategy="simultaneous_summarizer",
        backend="transformers",
        placement={"mode": "phased"},
        verdict={"evidence_max_tokens": 6, "reasoning": False},
        data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
    )
    result = run(config, tmp_path)
    placement = result.run_info["placement"]
    assert placement["mode"] == "phased" and placement["loads"][SECOND_MODEL] >= 1
    check(result.run_info, tmp_path)


def test_phased_vllm_hetero_quickstart(second_model: str, tmp_path: Path) -> None:
    """The docs' heterogeneous quickstart, phased, through the CLI in a fresh process
    (where each released vLLM engine is really freed)."""
    overrides = {
        "placement.mode": "phased",
        "strategy": "simultaneous",
        "data.limit": 1,  # one item, both orders: the loads and releases are the same for more
        "sampling.discussion_max_tokens": 12,
        "verdict.evidence_max_tokens": 6,
        # Scores-first verdicts: fewer steps, so fewer vLLM loads (tens of seconds each on 2
        # cores); this test is about phased placement, reasoned verdicts are tested elsewhere.
        "verdict.reasoning": "false",
        # One round: the blind probes, then the verdicts (no discussion: this test is about
        # phased placement in a fresh process, a release and a reload; the talk of both models
        # is tested co-resident above and phased on transformers).
        "rounds": "1",
    }
    command = [sys.executable, "-m", "chateval.cli", "run", str(CONFIGS_DIR / "hetero_quickstart.yaml")]
    command += ["-o", str(tmp_path)] + [f"--set={k}={v}" for k, v in overrides.items()]
    if unavailable() is None:
        trace = tmp_path / "trace"
        done = run_cut_off(command, trace, timeout=900, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]
        assert outbound(trace) == []
    else:
        subprocess.run(command, check=True, cwd=ROOT, timeout=900)
    info = json.loads((tmp_path / "run.json").read_text())
    placement = info["placement"]
    # simultaneous, 1 round + probes: [A|B] [B|A] -> A, B, then A loaded again after its release
    assert placement["mode"] == "phased" and placement["loads"] == {DEFAULT_MODEL: 2, SECOND_MODEL: 1}
    check(info, tmp_path)
