"""Sweeps load each model once; reports render tables and plots from run folders."""

from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest
from chateval.errors import ConfigError, DataError
from chateval.reporting.markdown import write_report
from chateval.run.sweep import run_sweep
from tests.support.helpers import CONFIGS_DIR, asks_for_scores


def responder(request: GenerationRequest) -> str:
    if not asks_for_scores(request):
        return "a remark"
    if "Naturalness" in request.regex:
        return "Naturalness: 2\nCoherence: 3\nEngagingness: 1\nGroundedness: 1\nEvidence: ok"
    return "Assistant 1: 6\nAssistant 2: 5\nEvidence: ok"


def write_config(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"extends: {CONFIGS_DIR / 'quickstart.yaml'}\nname: {name}\n{body}")
    return path


def test_sweep_loads_each_model_once_and_report_renders(tmp_path: Path) -> None:
    loads: list[str] = []

    def factory(config: RunConfig, model: str) -> ScriptedBackend:
        loads.append(model)
        return ScriptedBackend(model, responder)

    configs = [
        write_config(tmp_path, "r1", "rounds: 1\n"),
        write_config(tmp_path, "r2", "rounds: 2\n"),
        write_config(tmp_path, "sim", "strategy: simultaneous\n"),
        write_config(tmp_path, "three", "agents: [{role: critic}, {role: editor}, {role: scientist}]\n"),
    ]
    results = run_sweep(configs, tmp_path / "runs", backend_factory=factory)
    assert loads == ["smollm2-135m"]
    assert [r.run_info["name"] for r in results] == ["r1", "r2", "sim", "three"]
    direct = CONFIGS_DIR / "quickstart_direct.yaml"
    results += run_sweep([direct], tmp_path / "runs", backend_factory=factory)

    report = write_report([r.outdir for r in results], tmp_path / "report")
    text = report.read_text()
    assert "| r2 | one_by_one | 2 x 2r, smollm2-135m | 12 |" in text
    assert "## Direct scoring" in text and "naturalness rho / tau" in text
    assert "### Communication strategies" in text
    # Paired comparisons against the first run: scripted referees always prefer answer 1, so
    # every run gives the same labels and differs from r1 by exactly 0 on all 12 items; 12
    # items bound the accuracy difference to +-0.333 and kappa's to that over 1 - p_e, not to
    # [0, 0].
    assert "## Paired comparisons (pairwise)" in text and "| run vs r1 |" in text
    (row,) = [line for line in text.splitlines() if line.startswith("| r2 | 12 |")][:1]
    assert row.startswith("| r2 | 12 | +0.000 [-0.333, +0.333] | +0.000 [-")
    assert row.endswith("| 0 / 0 | 1.000 | within noise |")
    assert (tmp_path / "report/pairwise_vs_rounds.png").stat().st_size > 1000
    assert (tmp_path / "report/pairwise_vs_agents.png").is_file()
    assert (tmp_path / "report/direct_dimensions.png").is_file()
    assert "![each referee's agreement with humans, and the panel's](referees.png)" in text
    assert (tmp_path / "report/referees.png").stat().st_size > 1000


def test_sweep_validates_every_config_before_running(tmp_path: Path) -> None:
    loads: list[str] = []
    good = write_config(tmp_path, "good", "")
    bad = write_config(tmp_path, "bad", "stratgy: x\n")
    with pytest.raises(ConfigError, match="stratgy"):
        run_sweep([good, bad], tmp_path / "runs", backend_factory=lambda c, m: loads.append(m))  # type: ignore[arg-type, func-returns-value]
    assert loads == [] and not (tmp_path / "runs").exists()


def test_sweep_opens_every_session_before_the_first_run(tmp_path: Path) -> None:
    """A data file missing in the last config fails the sweep before any model loads."""
    loads: list[str] = []
    good = write_config(tmp_path, "good", "")
    missing = write_config(
        tmp_path, "missing", f"data: {{format: jsonl_pairwise, path: {tmp_path / 'gone.jsonl'}}}\n"
    )
    with pytest.raises(DataError, match="gone.jsonl"):
        run_sweep([good, missing], tmp_path / "runs", backend_factory=lambda c, m: loads.append(m))  # type: ignore[arg-type, func-returns-value]
    assert loads == [] and not (tmp_path / "runs").exists()


def test_report_rejects_unfinished_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no run.json"):
        write_report([tmp_path], tmp_path / "report")


def test_summary_prints_pairwise_and_direct_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chateval.reporting.summary import print_summary

    results = run_sweep(
        [CONFIGS_DIR / "quickstart.yaml", CONFIGS_DIR / "quickstart_direct.yaml"],
        tmp_path,
        backend_factory=lambda c, m: ScriptedBackend(m, responder),
    )
    for result in results:
        print_summary(result)
    out = capsys.readouterr().out
    assert "accuracy" in out and "kappa" in out and "position consistency" in out
    assert "spearman" in out and "average" in out
    assert "echoes the prompt: 0.0% of" in out and "equals a verdict it saw: 100.0% of 24 verdicts" in out
    # Every referee always writes 6 then 5: equal verdicts are collapse, not copying (before
    # the permutation chance this line read "copies a verdict it saw: 100.0%").
    assert "on another item 100.0%): collapse, not copying" in out
    said = " ".join(out.split())
    assert (
        "warning: the panel looks degenerate: verdicts equal to one seen 100%, but a referee's verdict "
        "on another item matches as often (100%): collapse, not copying; scores never vary: Critic, "
        "Everyday Reader"
    ) in said
    outdir = results[0].outdir
    assert f"read the debates: chateval report {outdir} (writes report.md and report.html in" in said


def test_summary_says_when_no_verdict_was_decisive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every verdict a tie: there is no first-position share to report, not a 0% one."""
    from chateval.reporting.summary import print_summary

    def ties(request: GenerationRequest) -> str:
        return "\nAssistant 1: 5\nAssistant 2: 5" if asks_for_scores(request) else " a remark"

    [result] = run_sweep(
        [CONFIGS_DIR / "quickstart.yaml"], tmp_path, backend_factory=lambda c, m: ScriptedBackend(m, ties)
    )
    print_summary(result)
    out = capsys.readouterr().out
    assert "no referee's verdict named a winner" in out and "the answer shown first won" not in out
