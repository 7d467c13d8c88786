"""The judgment store from the command line and the config: ``chateval run --cache DIR`` and
``--no-cache`` (through a small OpenAI-compatible server standing in for the model,
tests/support/fake_server.py, so the command runs for real and its requests are counted), the
config's ``cache`` key (false: no store; a relative folder: against the config's folder), and
the default place (``$CHATEVAL_CACHE``)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.cli.app import cache_choice
from chateval.config.files import dump_config, load_config
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from chateval.store.judgments import STORE_FILE
from chateval.store.location import CACHE_SETTING
from tests.run.test_judgment_store_runs import item_config, store_info
from tests.support.fake_server import Behaviour, fake_server
from tests.support.helpers import prompt_dependent, tiny_config
from tests.support.scripted import soft_checksum_referee


@pytest.fixture
def behaviour() -> Behaviour:
    return Behaviour(models=["served"], responder=prompt_dependent)


@pytest.fixture
def config_file(behaviour: Behaviour, tmp_path: Path) -> Iterator[Path]:
    """A config file in ``tmp_path/configs`` whose referees are a model on the fake server and
    whose ``cache`` is the relative folder ``stores/mine``."""
    with fake_server(behaviour) as base_url:
        models = tmp_path / "models"
        models.mkdir()
        entry = {"backend": "openai", "server": {"base_url": base_url, "backoff_s": 0.01}}
        (models / "registry.yaml").write_text(yaml.safe_dump({"served": entry}))
        config = tiny_config(
            models_dir=str(models),
            data={"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 1},
            backend="transformers",
            agents=[{"role": "critic", "model": "served"}, {"role": "everyday_reader", "model": "served"}],
            verdict={"evidence_max_tokens": 6, "reasoning_max_tokens": 12, "soft": False},
        )
        tree = yaml.safe_load(dump_config(config))
        tree["cache"] = "stores/mine"
        (tmp_path / "configs").mkdir()
        path = tmp_path / "configs" / "served.yaml"
        path.write_text(yaml.safe_dump(tree))
        yield path


def chateval_run(config_file: Path, out: Path, *options: str) -> Result:
    result = CliRunner().invoke(app, ["run", str(config_file), "-o", str(out), *options])
    return result


def test_the_command_lines_cache_choice() -> None:
    assert cache_choice(None, False) is None  # the config's ``cache``
    assert cache_choice(Path("s"), False) == Path("s")
    assert cache_choice(None, True) is False
    with pytest.raises(typer.BadParameter, match="exclude each other"):
        cache_choice(Path("s"), True)


@pytest.mark.slow  # four commands over HTTP: seconds
def test_the_configs_relative_store_then_cache_dir_then_no_cache(
    behaviour: Behaviour, config_file: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "configs" / "stores" / "mine"  # the config's folder, not the working one
    first = chateval_run(config_file, tmp_path / "first")
    assert first.exit_code == 0, first.output
    sent = len(behaviour.bodies)
    assert sent and (mine / STORE_FILE).is_file()
    assert "judgment store: 0 debates reused, 2 judged now" in first.output
    assert store_info(tmp_path / "first")["path"] == str(mine / STORE_FILE)

    again = chateval_run(config_file, tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert len(behaviour.bodies) == sent and "judgment store: 2 debates reused, 0 judged now" in again.output

    other = tmp_path / "other_store"
    elsewhere = chateval_run(config_file, tmp_path / "elsewhere", "--cache", str(other))
    assert elsewhere.exit_code == 0, elsewhere.output
    assert len(behaviour.bodies) == 2 * sent and (other / STORE_FILE).is_file()
    assert store_info(tmp_path / "elsewhere")["path"] == str(other / STORE_FILE)

    none = chateval_run(config_file, tmp_path / "none", "--no-cache")
    assert none.exit_code == 0, none.output
    assert len(behaviour.bodies) == 3 * sent and "judgment store" not in none.output
    assert "judgment_store" not in json.loads((tmp_path / "none" / "run.json").read_text())


def test_cache_and_no_cache_together_are_refused(config_file: Path, tmp_path: Path) -> None:
    result = chateval_run(config_file, tmp_path / "out", "--cache", str(tmp_path / "s"), "--no-cache")
    assert result.exit_code == 2 and "--cache and --no-cache exclude each other" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "s").exists()


def test_a_relative_cache_in_a_config_file_is_made_absolute_against_its_folder(tmp_path: Path) -> None:
    tree = yaml.safe_load(dump_config(tiny_config()))
    values = {"relative": "stores/mine", "absolute": str(tmp_path / "elsewhere"), "off": False, "on": True}
    expected = {
        "relative": tmp_path / "stores" / "mine",
        "absolute": tmp_path / "elsewhere",
        "off": False,
        "on": True,
    }
    for name, value in values.items():
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({**tree, "cache": value}))
        assert load_config(tmp_path / f"{name}.yaml").cache == expected[name], name


def test_the_default_store_is_chateval_cache_and_the_config_key_false_turns_it_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.run.test_judgment_store_runs import store_models_dir

    models_dir = store_models_dir(tmp_path / "models")
    monkeypatch.setenv(CACHE_SETTING, str(tmp_path / "default"))
    backends = {DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)}
    run(item_config(models_dir), tmp_path / "on", backends=backends)
    assert store_info(tmp_path / "on")["path"] == str(tmp_path / "default" / STORE_FILE)
    backend = ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)
    run(item_config(models_dir, cache=False), tmp_path / "off", backends={DEFAULT_MODEL: backend})
    assert backend.calls and "judgment_store" not in json.loads((tmp_path / "off" / "run.json").read_text())
