"""A distribution installed beside chateval adds a measure, a data format and a strategy
through entry points, with no line of chateval changed: the measure's section is in
metrics.json of a rescored run folder, and ``chateval check`` accepts a config naming the
format and the strategy (reading its items with the plugin's loader, planning its debates with
the plugin's strategy). Gone from the path, the plugin is gone from every registry."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from tests.support.helpers import MODELS_DIR
from tests.support.plugins import on_path, write_distribution

RUN_FOLDER = Path(__file__).parent.parent / "fixtures" / "run_folders" / "soft_verdicts"

PLUGIN = '''"""A plugin of chateval: a measure, a data format and a strategy."""

from chateval.core.items import PairwiseItem
from chateval.debate.strategies import Simultaneous


class VerdictCount:
    name = "toy_verdict_count"
    title = "toy: verdicts scored"

    def compute(self, settings, records):
        return {"verdicts": len(records)}

    def text(self, section):
        return f"{section['verdicts']} verdicts"


VERDICT_COUNT = VerdictCount()


def load_tsv(data):
    """One comparison a line: question, answer A, answer B, label, tab-separated."""
    lines = data.file.read_text(encoding="utf-8").splitlines()
    return [
        PairwiseItem(f"t{n}", *line.split("\\t")[:3], label=line.split("\\t")[3])
        for n, line in enumerate(lines, 1)
    ]


class AllAtOnce(Simultaneous):
    name = "toy_all_at_once"
'''


@pytest.fixture
def plugin_site(tmp_path: Path) -> Path:
    return write_distribution(
        tmp_path / "site",
        "toy-chateval-plugin",
        {
            "chateval.measures": {"toy_verdict_count": "toy_chateval_plugin:VERDICT_COUNT"},
            "chateval.data_formats": {"toy_tsv": "toy_chateval_plugin:load_tsv"},
            "chateval.strategies": {"toy_all_at_once": "toy_chateval_plugin:AllAtOnce"},
        },
        {"toy_chateval_plugin/__init__.py": PLUGIN},
    )


def test_a_plugins_measure_is_in_a_rescored_run_folder(plugin_site: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(RUN_FOLDER, folder)
    verdicts = len((folder / "verdicts.jsonl").read_text(encoding="utf-8").splitlines())
    with on_path(plugin_site):
        result = CliRunner().invoke(app, ["rescore", str(folder)])
    assert result.exit_code == 0, result.output
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["measures"]["toy_verdict_count"] == {"verdicts": verdicts}
    # Uninstalled, the plugin measures nothing.
    assert CliRunner().invoke(app, ["rescore", str(folder)]).exit_code == 0
    assert (
        "toy_verdict_count"
        not in json.loads((folder / "metrics.json").read_text(encoding="utf-8"))["measures"]
    )


def test_check_accepts_a_config_naming_a_plugins_data_format_and_strategy(
    plugin_site: Path, tmp_path: Path
) -> None:
    if not (MODELS_DIR / "smollm2-135m" / "config.json").is_file():
        pytest.skip("the default model is not prepared (bash scripts/setup.sh)")
    (tmp_path / "pairs.tsv").write_text(
        "What is 2 + 2?\t4\t5\tA\nName a primary colour.\tGreen\tRed\tB\n", encoding="utf-8"
    )
    config = tmp_path / "toy.yaml"
    config.write_text(
        "name: toy\ntask: pairwise\ndata: {format: toy_tsv, path: pairs.tsv}\nstrategy: toy_all_at_once\n"
        f"agents: [{{role: critic}}, {{role: general_public}}]\nmodels_dir: {MODELS_DIR}\n",
        encoding="utf-8",
    )
    with on_path(plugin_site):
        result = CliRunner().invoke(app, ["check", str(config)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("toy: ready to run\n") and "2 items, 4 debates" in result.output
    # Uninstalled, the format is a misspelt name again, refused before anything is read.
    refused = CliRunner().invoke(app, ["check", str(config)])
    assert (
        refused.exit_code == 2
        and "unknown data format 'toy_tsv'; known: chateval_faireval," in refused.output
    )
