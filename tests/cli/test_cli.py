"""The command line: clear one-line errors with exit code 2, and the listing commands."""

from pathlib import Path

from typer.testing import CliRunner

from chateval.cli import app
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR

runner = CliRunner()


def test_bad_config_exits_2_with_message(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "task: pairwise\ndata: {format: jsonl_pairwise, path: x.jsonl}\n"
        "agents: [{role: critic}]\nstrategi: x\n"
    )
    result = runner.invoke(app, ["run", str(config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "strategi: unknown key" in result.output
    assert "Traceback" not in result.output


def test_missing_data_file_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "task: pairwise\ndata: {format: jsonl_pairwise, path: missing.jsonl}\nagents: [{role: critic}]\n"
    )
    result = runner.invoke(app, ["run", str(config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "missing.jsonl: data file not found" in result.output


def test_roles_lists_the_library() -> None:
    result = runner.invoke(app, ["roles"])
    assert result.exit_code == 0
    for key in ("critic", "everyday_reader", "subject_expert", "psychologist", "scientist"):
        assert key in result.output


def test_models_list() -> None:
    result = runner.invoke(app, ["models", "list", "--models-dir", str(MODELS_DIR)])
    assert result.exit_code == 0
    assert "smollm2-135m" in result.output


def test_unknown_model_prepare_exits_2() -> None:
    result = runner.invoke(app, ["models", "prepare", "gpt-17", "--models-dir", str(MODELS_DIR)])
    assert result.exit_code == 2
    assert "unknown model 'gpt-17'" in result.output and "smollm2-135m" in result.output


def test_unknown_model_in_config_exits_2_before_writing(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    samples = Path(__file__).resolve().parents[2] / "configs/samples/quickstart_pairwise.jsonl"
    config.write_text(
        f"task: pairwise\ndata: {{format: jsonl_pairwise, path: {samples}}}\n"
        f"agents: [{{role: critic, model: llama-99b}}]\nmodels_dir: {MODELS_DIR}\n"
    )
    result = runner.invoke(app, ["run", str(config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "unknown model 'llama-99b'" in result.output
    assert not (tmp_path / "out").exists()


def test_debug_flag_shows_the_traceback(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("task: pairwise\n")
    plain = runner.invoke(app, ["run", str(config)])
    assert plain.exit_code == 2 and "Traceback" not in plain.output
    debug = runner.invoke(app, ["--debug", "run", str(config)])
    assert debug.exit_code != 0
    from chateval.errors import ConfigError

    assert isinstance(debug.exception, ConfigError)


def test_several_configs_are_each_checked_under_their_path_and_any_problem_exits_2(tmp_path: Path) -> None:
    typo, missing = tmp_path / "typo.yaml", tmp_path / "missing.yaml"
    typo.write_text(f"extends: {CONFIGS_DIR / 'quickstart.yaml'}\nsampling: {{temprature: 0.5}}\n")
    result = runner.invoke(app, ["check", str(typo), str(missing)], env={"COLUMNS": "250"})
    assert result.exit_code == 2
    said = result.output
    assert (
        said.index(f"== {typo}\n")
        < said.index("unknown key (did you mean temperature?")
        < said.index(f"== {missing}\nerror: {missing}: config file not found")
    )
    assert f"checked 2 configs: 0 ready, 2 with problems ({typo}, {missing})" in said
    alone = runner.invoke(app, ["check", str(missing)])  # one config: its lines alone
    assert alone.exit_code == 2 and alone.output == f"error: {missing}: config file not found\n"
