"""The package's public API (chateval/__init__.py): small, lazy, and enough for a notebook."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import chateval
from chateval.backends.scripted import ScriptedBackend
from chateval.engines.models import DEFAULT_MODEL
from tests.support.helpers import CONFIGS_DIR, ROOT, prompt_dependent


def test_importing_the_package_loads_none_of_the_stages() -> None:
    probe = (
        "import sys, json, chateval; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('chateval.') "
        "or m.split('.')[0] in ('torch', 'vllm', 'transformers', 'pydantic', 'numpy'))))"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT
        ).stdout
    )
    # three tiny modules, no stage; offline.py switches telemetry off before anything else loads
    assert loaded == ["chateval.errors", "chateval.offline", "chateval.version"]


def test_the_public_names_are_the_stages_own() -> None:
    from chateval.config.files import load_config
    from chateval.run.finished import load_finished_run
    from chateval.run.runner import run

    assert chateval.load_config is load_config
    assert chateval.evaluate is run
    assert chateval.load_finished_run is load_finished_run
    assert set(dir(chateval)) == set(chateval.__all__)
    assert all(hasattr(chateval, name) for name in chateval.__all__)


def test_a_notebook_loads_a_config_runs_it_and_reads_the_results(tmp_path: Path) -> None:
    config = chateval.load_config(str(CONFIGS_DIR / "quickstart.yaml"), ["data.limit=2", "rounds=1"])
    result = chateval.evaluate(
        config,
        str(tmp_path / "run"),
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)},
    )
    finished = chateval.load_finished_run(str(result.outdir))
    assert finished.name == "quickstart" and finished.metrics == result.metrics
    assert [r["item_id"] for r in finished.verdicts()] == ["q01", "q02"]
    assert chateval.rescore(str(result.outdir)) == result.metrics


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="run_everything"):
        _ = chateval.run_everything  # type: ignore[attr-defined]


def test_the_version_is_written_once() -> None:
    """pyproject.toml reads the version from chateval/version.py; the installed metadata, the
    package and run.json's chateval_version all say the same."""
    from importlib.metadata import version

    import chateval
    from chateval.version import __version__

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and "\nversion =" not in pyproject.split("[tool.")[0]
    assert chateval.__version__ == __version__ == version("chateval-offline")


def _imports_the_root(node: object) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module == "chateval" and node.level == 0
    return isinstance(node, ast.Import) and any(alias.name == "chateval" for alias in node.names)


def test_no_stage_imports_the_package_root() -> None:
    """The root is the public API above every stage (import-linter's layers cannot place the
    container itself): a stage that imported it would climb over the whole contract."""
    climbing = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "src" / "chateval").rglob("*.py"))
        if path != ROOT / "src" / "chateval" / "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _imports_the_root(node)
    ]
    assert not climbing, climbing
