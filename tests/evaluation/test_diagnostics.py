"""Opinion probes and per-model diagnostics, with scripted referees whose minds are known."""

from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.errors import BackendError
from chateval.run.runner import run
from tests.support.helpers import read_jsonl, saw_discussion, tiny_config

TWO_MODELS = [{"role": "critic", "model": "steady"}, {"role": "editor", "model": "swayed"}]


def responder(request: GenerationRequest) -> str:
    """``steady`` always prefers the first shown answer; ``swayed`` prefers it only until it has
    seen some discussion, then the second."""
    if not request.regex:
        return f"{request.model} has a view"
    seen_talk = saw_discussion(request)
    first_wins = request.model == "steady" or not seen_talk
    scores = (8, 3) if first_wins else (2, 9)
    return f"Assistant 1: {scores[0]}\nAssistant 2: {scores[1]}\nEvidence: x"


def backends() -> dict[str, ScriptedBackend]:
    return {m: ScriptedBackend(m, responder) for m in ("steady", "swayed")}


def config(**overrides: object) -> RunConfig:
    return tiny_config(agents=TWO_MODELS, position_calibration=False, **overrides)


def verdicts(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    return read_jsonl(folder / "verdicts.jsonl")


@pytest.mark.parametrize("strategy", ["one_by_one", "simultaneous", "simultaneous_summarizer"])
def test_probes_leave_the_debate_unchanged(strategy: str, tmp_path: Path) -> None:
    plain = run(config(strategy=strategy), tmp_path / "plain", backends=backends())
    used = backends()
    probed = run(config(strategy=strategy, opinion_probes=True), tmp_path / "probed", backends=used)
    assert probed.run_info["steps"] == plain.run_info["steps"] + 2
    # One probe per referee per round per debate, all in the last two steps (assessments, scores).
    last_call = used["steady"].calls[-1]
    assert len(last_call) == 2 * 2 and all(r.regex for r in last_call)
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
    used = backends()
    run(config(opinion_probes=True), tmp_path, backends=used)
    probes = used["swayed"].calls[-1]
    seen = [saw_discussion(r) for r in probes]
    assert seen == [False, True, False, True]  # item 1 rounds 0, 1; item 2 rounds 0, 1


def test_per_model_diagnostics(tmp_path: Path) -> None:
    result = run(config(opinion_probes=True), tmp_path, backends=backends())
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
    result = run(config(), tmp_path, backends=backends())
    assert result.metrics and result.metrics["per_model"]["swayed"]["opinion_changes"] is None


class DiesAtProbes(ScriptedBackend):
    def generate(self, requests):  # type: ignore[no-untyped-def]
        if requests and all(r.regex for r in requests) and len(requests) == 4:
            raise BackendError("engine died (simulated)")
        return super().generate(requests)


def test_probe_step_resumes(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    run(config(opinion_probes=True), reference, backends=backends())
    crashed = tmp_path / "crashed"
    dying = {"steady": DiesAtProbes("steady", responder), "swayed": DiesAtProbes("swayed", responder)}
    with pytest.raises(BackendError):
        run(config(opinion_probes=True), crashed, backends=dying)
    run(config(opinion_probes=True), crashed, backends=backends())
    for name in ("verdicts.jsonl", "transcripts.jsonl", "metrics.json"):
        assert (crashed / name).read_text() == (reference / name).read_text()
