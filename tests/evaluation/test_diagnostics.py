"""Opinion probes and per-model diagnostics, with scripted referees whose minds are known."""

from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.errors import BackendError
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, read_jsonl, saw_discussion
from tests.support.scripted import (
    steady_and_swayed_backends,
    steady_and_swayed_config,
    steady_or_swayed_referee,
)


def verdicts(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    return read_jsonl(folder / "verdicts.jsonl")


@pytest.mark.parametrize("strategy", ["one_by_one", "simultaneous", "simultaneous_summarizer"])
def test_probes_leave_the_debate_unchanged(strategy: str, tmp_path: Path) -> None:
    plain = run(
        steady_and_swayed_config(strategy=strategy), tmp_path / "plain", backends=steady_and_swayed_backends()
    )
    used = steady_and_swayed_backends()
    probed = run(
        steady_and_swayed_config(strategy=strategy, opinion_probes=True), tmp_path / "probed", backends=used
    )
    assert probed.run_info["steps"] == plain.run_info["steps"] + 2
    # One probe per referee per round per debate, all in the last two steps (assessments, scores).
    last_call = used["steady"].calls[-1]
    assert len(last_call) == 2 * 2 and all(asks_for_scores(r) for r in last_call)
    for a, b in zip(verdicts(tmp_path / "plain"), verdicts(tmp_path / "probed"), strict=True):
        for order in b["orders"]:
            for ref in order["referees"]:
                assert len(ref.pop("opinions")) == 2
                assert len(ref.pop("opinion_scores")) == 2
        for record in (a, b):
            for order in record["orders"]:
                for ref in order["referees"]:
                    # The probes add blind turns (chance baselines) and assessments (cut-off counts).
                    parroting = ref["parroting"].items()
                    ref["parroting"] = {k: v for k, v in parroting if not k.startswith("blind_")}
                    del ref["cut_off"]["assessments"], ref["cut_off"]["assessments_cut"]
        assert a == b


def test_probe_of_round_zero_sees_no_discussion(tmp_path: Path) -> None:
    used = steady_and_swayed_backends()
    run(steady_and_swayed_config(opinion_probes=True), tmp_path, backends=used)
    probes = used["swayed"].calls[-1]
    seen = [saw_discussion(r) for r in probes]
    assert seen == [False, True, False, True]  # item 1 rounds 0, 1; item 2 rounds 0, 1


def test_per_model_diagnostics(tmp_path: Path) -> None:
    result = run(
        steady_and_swayed_config(opinion_probes=True), tmp_path, backends=steady_and_swayed_backends()
    )
    per_model = result.metrics["per_model"] if result.metrics else {}
    assert per_model["steady"]["referees"] == ["Critic"]
    assert per_model["steady"]["opinion_changes"]["changed_share"] == 0.0
    swayed = per_model["swayed"]["opinion_changes"]
    assert swayed == {"referee_debates": 2, "changed_share": 1.0, "mean_changes": 1.0}
    # Critic says A, Editor says B: the 2-referee majority is a tie, so neither agrees with it.
    assert per_model["steady"]["agreement_with_panel"] == 0.0
    # Per item: 2 rounds, the verdict's scores, and 2 probes of 2 requests each.
    assert result.run_info["per_model"]["swayed"]["requests"] == 2 * (2 + 1 + 2 * 2)


def test_diagnostics_without_probes_say_so(tmp_path: Path) -> None:
    result = run(steady_and_swayed_config(), tmp_path, backends=steady_and_swayed_backends())
    assert result.metrics and result.metrics["per_model"]["swayed"]["opinion_changes"] is None


class DiesAtProbes(ScriptedBackend):
    def generate(self, requests):  # type: ignore[no-untyped-def]
        if requests and all(asks_for_scores(r) for r in requests) and len(requests) == 4:
            raise BackendError("engine died (simulated)")
        return super().generate(requests)


def test_probe_step_resumes(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    run(steady_and_swayed_config(opinion_probes=True), reference, backends=steady_and_swayed_backends())
    crashed = tmp_path / "crashed"
    dying = {
        "steady": DiesAtProbes("steady", steady_or_swayed_referee),
        "swayed": DiesAtProbes("swayed", steady_or_swayed_referee),
    }
    with pytest.raises(BackendError):
        run(steady_and_swayed_config(opinion_probes=True), crashed, backends=dying)
    run(steady_and_swayed_config(opinion_probes=True), crashed, backends=steady_and_swayed_backends())
    for name in ("verdicts.jsonl", "transcripts.jsonl", "metrics.json"):
        assert (crashed / name).read_text() == (reference / name).read_text()
