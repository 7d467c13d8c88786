"""The run folder on its own: atomic writes, and when a folder is created, resumed or refused."""

import json
from pathlib import Path

import pytest

from chateval.core.textfile import write_json, write_jsonl
from chateval.errors import ConfigError
from chateval.run.outdir import changed_keys, prepare_outdir
from tests.support.helpers import ROOT

CONFIG = "name: t\nrounds: 2\nscheduling: streaming\nsampling:\n  temperature: 0.0\n"


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    write_json(tmp_path / "metrics.json", {"accuracy": 0.5, "label": "é"})
    write_jsonl(tmp_path / "verdicts.jsonl", [{"item_id": "1"}, {"item_id": "2"}])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json", "verdicts.jsonl"]
    assert json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))["label"] == "é"
    assert (tmp_path / "verdicts.jsonl").read_text().splitlines() == ['{"item_id": "1"}', '{"item_id": "2"}']


def test_a_new_folder_is_created_with_its_config(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    assert prepare_outdir(out, False, CONFIG) is False
    assert (out / "config.yaml").read_text() == CONFIG


def test_an_unfinished_run_with_the_same_config_resumes(tmp_path: Path) -> None:
    prepare_outdir(tmp_path, False, CONFIG)
    assert prepare_outdir(tmp_path, False, CONFIG) is True
    # How it runs may change on resume (scheduling, placement); what it computes may not.
    assert prepare_outdir(tmp_path, False, CONFIG.replace("streaming", "barrier")) is True


def test_an_unfinished_run_with_another_config_is_refused_naming_the_keys(tmp_path: Path) -> None:
    prepare_outdir(tmp_path, False, CONFIG)
    changed = CONFIG.replace("rounds: 2", "rounds: 3").replace("0.0", "0.7")
    with pytest.raises(ConfigError, match=r"changed: rounds, sampling\.temperature"):
        prepare_outdir(tmp_path, False, changed)


def test_a_run_of_an_earlier_release_resumes_when_only_new_defaults_differ(tmp_path: Path) -> None:
    """config.yaml of an earlier release lacks the keys added since; their defaults are no change."""
    import yaml

    from chateval.config.files import dump_config, load_config

    today = dump_config(load_config(ROOT / "configs" / "quickstart.yaml"))
    earlier = yaml.safe_load(today)
    del earlier["data"]["seed"], earlier["data"]["label_fraction"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(earlier), encoding="utf-8")
    assert prepare_outdir(tmp_path, False, today) is True
    earlier["rounds"] = 3
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(earlier), encoding="utf-8")
    with pytest.raises(ConfigError, match="changed: rounds"):
        prepare_outdir(tmp_path, False, today)


def test_a_finished_run_is_kept_unless_forced_and_force_removes_only_run_files(tmp_path: Path) -> None:
    prepare_outdir(tmp_path, False, CONFIG)
    for name in ("run.json", "journal.jsonl", "verdicts.jsonl"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="already holds a finished run; pass --force"):
        prepare_outdir(tmp_path, False, CONFIG)
    assert prepare_outdir(tmp_path, True, CONFIG) is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "notes.txt"]


def test_an_output_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    with pytest.raises(ConfigError, match="exists and is not a folder"):
        prepare_outdir(tmp_path / "out", False, CONFIG)


def test_changed_keys_compare_nested_values() -> None:
    assert changed_keys({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}, "d": 4}) == ["a.c", "d"]
    assert changed_keys({"placement": {"mode": "auto"}}, {"placement": {"mode": "phased"}}) == []
