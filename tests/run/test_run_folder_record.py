"""A run folder is the whole truth about its run: copied elsewhere with its data, config and
models gone, it reports, exports and rescores the same; its data edited afterwards, its reports
show the items as debated and say the file changed; a broken file is named by file, line and
field. Scripted referees: the record, not the judging, is under test."""

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.files import load_config
from chateval.engines.factory import Engines
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError, DataError
from chateval.prompts.builder import role_library
from chateval.record.files import RunFolder
from chateval.record.inputs import file_hash
from chateval.record.reading import validated
from chateval.record.roster import folder_fingerprint
from chateval.run.finished import load_finished_run
from chateval.run.runner import run
from chateval.run.session import open_session
from chateval.schema.verdicts import VerdictRecord
from tests.support.helpers import CONFIGS_DIR, prompt_dependent, tiny_config

runner = CliRunner()
EDITED = "An answer written after the run."


def _judged(root: Path) -> Path:
    """A systems run over a copy of the systems sample (answers, labels), from a config file
    of its own: the run folder, with data, labels and config beside it."""
    shutil.copytree(CONFIGS_DIR / "samples" / "systems", root / "data")
    shutil.copy(CONFIGS_DIR / "samples" / "systems_labels.csv", root / "labels.csv")
    tree = yaml.safe_load((CONFIGS_DIR / "systems_quickstart.yaml").read_text())
    tree["data"]["path"] = {s: f"data/{s}.jsonl" for s in ("careful", "brief", "rambling")}
    tree["data"]["labels_file"]["path"] = "labels.csv"
    tree["rounds"] = 1
    config_file = root / "config.yaml"
    config_file.write_text(yaml.safe_dump(tree))
    folder = root / "run"
    backend = ScriptedBackend(DEFAULT_MODEL, prompt_dependent)
    run(load_config(config_file), folder, backends={DEFAULT_MODEL: backend})
    return folder


def _cli(*args: str | Path) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def _outputs(folder: Path, into: Path) -> dict[str, str]:
    """What a reader gets of ``folder``: report.md, report.html, the export CSV and the rescored
    metrics.json, with the folder's own path written as RUN."""
    _cli("report", folder, "-o", into / "report")
    _cli("export", folder, "-o", into / "rows.csv")
    _cli("rescore", folder)
    texts = {
        "report.md": (into / "report" / "report.md").read_text(),
        "report.html": (into / "report" / "report.html").read_text(),
        "rows.csv": (into / "rows.csv").read_text(),
        "metrics.json": (folder / "metrics.json").read_text(),
    }
    return {name: text.replace(str(folder), "RUN") for name, text in texts.items()}


@pytest.mark.slow  # a second or more: the fast tier stays under its 60 s
def test_a_copied_folder_reads_the_same_without_its_data_config_or_models(tmp_path: Path) -> None:
    folder = _judged(tmp_path / "node")
    before = _outputs(folder, tmp_path / "before")
    laptop = tmp_path / "laptop" / "run"
    shutil.copytree(folder, laptop)
    for gone in ("data", "labels.csv", "config.yaml", "run"):
        path = tmp_path / "node" / gone
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    after = _outputs(laptop, tmp_path / "after")
    for name in before:
        assert after[name] == before[name], name
    # The page shows the answers from the record (the data is gone), and no notice.
    careful = (CONFIGS_DIR / "samples" / "systems" / "careful.jsonl").read_text().splitlines()[0]
    first_answer = json.loads(careful)["response"]
    assert first_answer.split(".")[0].replace("'", "&#39;") in after["report.html"]
    assert 'class="notice"' not in after["report.html"]


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_an_edited_data_file_shows_the_items_as_debated_and_says_so(tmp_path: Path) -> None:
    folder = _judged(tmp_path)
    data = tmp_path / "data" / "careful.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    original = rows[0]["response"]
    rows[0]["response"] = EDITED
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    finished = load_finished_run(folder)
    assert finished.changed_inputs() == [str(data)]
    page = _outputs(folder, tmp_path / "out")
    notice = f"{data} changed since the run; shown are the items as the run debated them"
    assert notice in page["report.html"] and page["report.html"].count('class="notice"') == 1
    assert EDITED not in page["report.html"]
    assert original.split(".")[0].replace("'", "&#39;") in page["report.html"]
    assert f"{data} changed since the run; the numbers are those of the items it debated" in page["report.md"]


def test_the_record_holds_the_items_roster_and_input_hashes(tmp_path: Path) -> None:
    folder = _judged(tmp_path)
    finished = load_finished_run(folder)
    items = finished.items()
    assert items is not None and len(items) == len(finished.verdicts())
    assert {item.id for item in items} == {r["item_id"] for r in finished.verdicts()}
    labelled = {item.id: item for item in items if getattr(item, "label", None)}
    assert labelled and all(
        r["human_label"] == labelled[r["item_id"]].label
        for r in finished.verdicts()
        if r["item_id"] in labelled
    )
    roster = finished.roster
    assert "rebuilt" not in roster and roster["prompt_style"] == finished.config.prompt_style
    assert [(r["name"], r["role_text"]) for r in roster["referees"]] == [
        ("Critic", role_library()["critic"].description),
        ("Everyday Reader", role_library()["everyday_reader"].description),
    ]
    # A backend handed in: its kind, no folder of weights to fingerprint.
    assert roster["models"][DEFAULT_MODEL] | {"replicas": 1} == {
        "backend": "scripted",
        "replicas": 1,
        "path": None,
        "fingerprint": None,
        "server": None,
        "dtype": None,
        "max_model_len": None,
        "replaced_system_prompt": None,  # a scripted backend has no chat template
    }
    inputs = finished.info.get("inputs") or {}
    expected = [tmp_path / "data" / f"{s}.jsonl" for s in ("careful", "brief", "rambling")] + [
        tmp_path / "labels.csv"
    ]
    assert inputs == {str(path): file_hash(path) for path in expected}


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        (
            "verdicts.jsonl",
            lambda text: text.replace('"parse_failures": 0', '"parse_failures": "none"', 2),
            r"verdicts.jsonl:1: field parse_failures: Input should be a valid integer",
        ),
        (
            "items.jsonl",
            lambda text: text.replace('"kind": "pairwise"', '"kind": "pairwise", "colour": "red"', 1),
            r"items.jsonl:1: field colour: Extra inputs are not permitted",
        ),
        (
            "run.json",
            lambda text: text.replace('"rounds": 1', '"rounds": "one"'),
            r"run.json: field rounds: Input should be a valid integer",
        ),
        (
            "roster.json",
            lambda text: text.replace('"role_text"', '"role_txt"', 1),
            r"roster.json: field referees\[0\].role_text: Field required; "
            r"field referees\[0\].role_txt: Extra",
        ),
        (
            "metrics.json",
            lambda text: text.replace('"items": ', '"items": -0.5, "was_items": ', 1),
            r"metrics.json: field items: Input should be a valid integer.*; field was_items: Extra",
        ),
    ],
    ids=["verdicts", "items", "run", "roster", "metrics"],
)
def test_a_broken_record_is_named_by_file_line_and_field(
    tmp_path: Path, name: str, edit: Callable[[str], str], message: str
) -> None:
    folder = _judged(tmp_path)
    path = RunFolder(folder).path / name
    path.write_text(edit(path.read_text()))
    result = runner.invoke(app, ["report", str(folder), "-o", str(tmp_path / "report")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(folder) in result.output
    assert re.search(message, result.output), result.output


def test_verdicts_made_elsewhere_rescore_from_their_config_alone(tmp_path: Path) -> None:
    folder = _judged(tmp_path)
    scored = (folder / "metrics.json").read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("config.yaml", "verdicts.jsonl"):  # the verdicts and the config naming their panel
        shutil.copy(folder / name, elsewhere / name)
    result = runner.invoke(app, ["rescore", str(elsewhere)])
    assert result.exit_code == 0, result.output
    assert f"note: {elsewhere} has no run.json" in result.output
    assert (elsewhere / "metrics.json").read_text() == scored


def test_a_run_whose_data_changed_since_it_started_does_not_resume(tmp_path: Path) -> None:
    folder = _judged(tmp_path)
    (folder / "run.json").unlink()  # an unfinished run: its journal holds every step
    data = tmp_path / "data" / "brief.jsonl"
    data.write_text(data.read_text().replace("Freeze it instead.", "Toast it."))
    backend = ScriptedBackend(DEFAULT_MODEL, prompt_dependent)
    with pytest.raises(ConfigError, match=rf"input files changed since it started \({data}\)"):
        run(load_config(tmp_path / "config.yaml"), folder, backends={DEFAULT_MODEL: backend})


def test_rescore_replaces_a_metrics_json_that_no_longer_reads(tmp_path: Path) -> None:
    folder = _judged(tmp_path)
    scored = (folder / "metrics.json").read_text()
    (folder / "metrics.json").write_text(scored.replace('"items": ', '"stale_key": 1, "items": ', 1))
    result = runner.invoke(app, ["report", str(folder), "-o", str(tmp_path / "md")])
    assert result.exit_code == 2 and f"`chateval rescore {folder}` writes it again" in result.output
    _cli("rescore", folder)
    assert (folder / "metrics.json").read_text() == scored


def test_a_sweeps_engines_are_fingerprinted_from_the_registry() -> None:
    """A sweep hands its runs engines it loaded itself: their roster still names each model's
    folder and fingerprint, from the session's registry."""
    session = open_session(tiny_config())  # the registry read; no model loaded
    assert isinstance(session.engines, Engines)
    shared = replace(session, given={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    model = shared.roster({})["models"][DEFAULT_MODEL]
    folder = session.engines.registry.folder(DEFAULT_MODEL)
    assert model["path"] == str(folder) and model["fingerprint"] == folder_fingerprint(folder)


def test_a_fingerprint_follows_the_files_not_hidden_ones(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(bytes(range(256)) * (20 << 12))  # 20 MiB: its edges
    first = folder_fingerprint(tmp_path)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "download.metadata").write_text("etag")
    assert folder_fingerprint(tmp_path) == first
    (tmp_path / "config.json").write_text('{"layers": 2}')
    assert folder_fingerprint(tmp_path) not in (first, None)


def test_a_record_fitting_neither_member_of_a_union_names_its_own_fields() -> None:
    distribution = {"probabilities": {}, "expected": None, "entropy": None, "unmapped": 0, "ambiguous": 0}
    row = {"agent": "Critic", "distributions": [distribution | {"colour": "red"}]}
    record = {"item_id": "x", "parse_failures": 0, "referees": [row]}
    with pytest.raises(DataError) as caught:
        validated(record, VerdictRecord, "verdicts.jsonl:7")
    assert str(caught.value) == (
        "verdicts.jsonl:7: field referees[0].distributions[0].colour: Extra inputs are not permitted"
    )
