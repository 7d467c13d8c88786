"""``chateval report RUN --html`` on a scripted run: one self-contained page, every item with
its filters' data, model output escaped, nothing loaded from the network. (A real browser test
is still to come: issue 19.)"""

import re
from pathlib import Path

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from chateval.backends.base import GenerationRequest
from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.errors import DataError
from chateval.html_report import render_run
from chateval.models import DEFAULT_MODEL
from chateval.report import load_run
from chateval.runner import run
from tests.conftest import prompt_dependent, quickstart_config

HOSTILE = '<script>alert("x")</script><img src="http://evil.example/x.png">'


def hostile(request: GenerationRequest) -> str:
    """A referee whose talk carries markup; its verdicts are the scripted ones."""
    return prompt_dependent(request) if request.regex else f"{HOSTILE} {prompt_dependent(request)}"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("run")
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile)})
    result = CliRunner().invoke(app, ["report", str(out), "--html", "-o", str(out / "report")])
    assert result.exit_code == 0, result.output
    return (out / "report" / "report.html").read_text(encoding="utf-8")


def test_every_item_has_a_row_and_a_view(page: str) -> None:
    rows = re.findall(r'<tr class="[^"]*" data-wrong="[01]"', page)
    assert len(rows) == 12
    assert len(re.findall(r'<section class="item" id="item-\d+">', page)) == 12
    for name in ("wrong", "inconsistent", "failures", "split"):
        assert f'data-filter="{name}"' in page


def test_model_output_is_escaped(page: str) -> None:
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own filter script only


def test_nothing_is_loaded_from_the_network(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert "Content-Security-Policy" in page and "default-src &#39;none&#39;" in page


def test_direct_runs_are_refused_with_a_clear_error(tmp_path: Path) -> None:
    summary = load_run_stub(tmp_path)
    with pytest.raises(DataError, match="--html covers pairwise runs so far"):
        render_run(summary)


def load_run_stub(folder: Path):  # noqa: ANN201
    (folder / "run.json").write_text("{}")
    (folder / "config.yaml").write_text("task: direct\n")
    return load_run(folder)


def test_items_show_their_question_and_both_answers(page: str) -> None:
    from chateval.config import load_config
    from chateval.debate.building import load_run_items
    from tests.conftest import CONFIGS_DIR

    first = load_run_items(load_config(CONFIGS_DIR / "quickstart.yaml"))[0]
    for text in (first.question, first.answer_a, first.answer_b):  # type: ignore[union-attr]
        assert str(escape(text)) in page
