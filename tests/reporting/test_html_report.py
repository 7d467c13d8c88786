"""``chateval report RUN... --html`` on scripted runs: self-contained pages with every item,
its filters' data and its debates; model output escaped; nothing loaded from the network;
several runs side by side; direct runs; big runs split into one page per item. (The page in
a real browser: tests/reporting/test_html_browser.py.)"""

import re
from pathlib import Path

import pytest
from markupsafe import escape
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.files import load_config
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import DataError
from chateval.reporting.html import write_html_report
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, asks_for_scores, prompt_text, quickstart_config, tiny_config
from tests.support.scripted import hostile_direct_referee, hostile_referee

ROW = re.compile(r'<tr class="[^"]*" data-\w+="[01]"')
SECTION = re.compile(r'<section class="item" id="item-\d+">')


def soft_hostile(request: GenerationRequest) -> str | GenerationResult:
    """``hostile_referee``, with its scores read from probabilities: each score's digit is one token
    that was 70% likely, the next value up 30% (a character per token)."""
    if not asks_for_scores(request):
        return hostile_referee(request)
    n = sum(map(ord, prompt_text(request)))
    first, second = n % 8 + 1, n % 6 + 1
    text = f"Assistant 1: {first}\nAssistant 2: {second}\nEvidence: n={n}"
    positions = {text.index(": ") + 2: (first, 0.7), text.rindex(f"2: {second}") + 3: (second, 0.7)}
    probabilities = tuple(
        {str(positions[i][0]): 0.7, str(positions[i][0] + 1): 0.3} if i in positions else {}
        for i in range(len(text))
    )
    ends = tuple(range(1, len(text) + 1))
    return GenerationResult(text, 10, len(text), "stop", token_ends=ends, token_probabilities=probabilities)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A soft summarizer run with opinion probes, a plain run of the same data, a direct run."""
    folder = tmp_path_factory.mktemp("runs")
    verdict = {"evidence_max_tokens": 6, "reasoning_max_tokens": 12, "soft": True}
    rich = quickstart_config(
        name="summarized", strategy="simultaneous_summarizer", opinion_probes=True, verdict=verdict
    )
    run(rich, folder / "summarized", backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_hostile)})
    run(
        quickstart_config(name="plain"),
        folder / "plain",
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile_referee)},
    )
    direct = load_config(CONFIGS_DIR / "quickstart_direct.yaml")
    run(
        direct,
        folder / "direct",
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile_direct_referee)},
    )
    return {name: folder / name for name in ("summarized", "plain", "direct")}


def render(folders: list[Path], outdir: Path) -> str:
    result = CliRunner().invoke(app, ["report", *map(str, folders), "-o", str(outdir)])
    assert result.exit_code == 0, result.output
    return (outdir / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    return render([runs["summarized"]], tmp_path_factory.mktemp("report"))


def first_section(page: str) -> str:
    start = page.index('<section class="item" id="item-1">')
    return page[start : page.index("</section>", start)]


def test_every_item_has_a_row_and_a_view(page: str) -> None:
    assert len(ROW.findall(page)) == 12 and len(SECTION.findall(page)) == 12
    for name in ("wrong", "inconsistent", "failures", "split"):
        assert f'data-filter="{name}"' in page
    assert 'data-filter="runs"' not in page  # one run: nothing to disagree with


def test_model_output_is_escaped(page: str) -> None:
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own filter script only


def test_nothing_is_loaded_from_the_network(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert "Content-Security-Policy" in page and "default-src &#39;none&#39;" in page
    images = re.findall(r'<img src="([^"]*)"', page)
    assert images and all(src.startswith("data:image/svg+xml;base64,") for src in images)


def test_the_index_summarises_the_run_config_and_its_metrics(page: str) -> None:
    settings = page[page.index('<table id="settings">') : page.index("</table>")]
    for text in (
        "simultaneous_summarizer, 2 rounds",
        "Critic (smollm2-135m), Everyday Reader (smollm2-135m); summarizer (smollm2-135m)",
        "reasoning first, soft (score probabilities)",
        "opinion probes",
        "both (position calibration)",
    ):
        assert text in settings, text
    metrics = page[page.index('<table id="metrics">') :]
    assert "<td>hard</td>" in metrics and "<td>soft</td>" in metrics
    assert "each referee&#39;s agreement with humans, and the panel&#39;s" in page


def test_an_item_view_shows_the_debate_round_by_round(page: str) -> None:
    section = first_section(page)
    assert section.count('<div class="debate">') == 2  # both answer orders, side by side
    assert "answers in order (A shown first)" in section and "answers swapped (B shown first)" in section
    assert section.count("<h4>Round 1</h4>") == 2 and section.count("<h4>Round 2</h4>") == 2
    assert '<div class="utt summary">' in section and "summary for Critic after round 1" in section
    assert "Critic</b> · smollm2-135m · discussion · stop · " in section
    assert re.search(r"· \d+ tokens</div>", section)
    assert "hidden turns" in section and "opinion probe: scores (before any discussion)" in section
    assert "opinions: before discussion: " in section and "final: " in section
    histogram = section[section.index('<span class="hist">A') :]
    histogram = histogram[: histogram.index("</span>")]
    assert histogram.count("<i style=") == 10  # the whole 1-10 scale
    assert re.search(r'<i style="height:70%" title="\d+: 70.0%"></i>', histogram)
    assert "both answer orders: each answer&#39;s scores summed" in section.lower()
    assert "Soft: expected scores summed the same way" in section
    assert '<a href="#item-2">next item</a>' in section and "previous item" not in section


def test_items_show_their_question_and_both_answers(page: str) -> None:
    from chateval.debate.building import load_run_items

    first = load_run_items(load_config(CONFIGS_DIR / "quickstart.yaml"))[0]
    for text in (first.question, first.answer_a, first.answer_b):  # type: ignore[union-attr]
        assert str(escape(text)) in page
    assert "<th>question</th><th>human</th>" in page  # the index row starts with the question
    assert f"<td>{escape(first.question[:40])}" in page  # type: ignore[union-attr]


def test_runs_of_the_same_data_side_by_side(runs: dict[str, Path], tmp_path: Path) -> None:
    page = render([runs["summarized"], runs["plain"]], tmp_path)
    assert "<title>chateval: summarized vs plain</title>" in page
    assert 'data-filter="runs"' in page and len(ROW.findall(page)) == 12
    header = page[page.index('<tr class="runs">') : page.index('<tr class="sort">')]
    assert '>summarized</th><th colspan="' in header and ">plain</th>" in header
    assert page.count("<th>soft</th>") == 1  # the plain run's backend gave no probabilities
    section = first_section(page)
    assert section.count('<div class="debate">') == 4  # two runs, two orders each
    assert "<h3>summarized · answers in order" in section and "<h3>plain · answers in order" in section
    assert section.count('<p class="decision">') == 2


def test_an_item_one_run_lacks_shows_a_dash_and_counts_as_disagreeing(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    two = tmp_path / "two"
    run(
        tiny_config(name="two"),
        two,
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile_referee)},
    )
    page = render([runs["plain"], two], tmp_path / "report")
    rows = page[page.index("<tbody>") : page.index("</tbody>")].split("</tr>")[:-1]
    assert len(rows) == 12
    lacking = [row for row in rows if "<td>-</td>" in row]
    assert len(lacking) == 10 and all('data-runs="1"' in row for row in lacking)


def test_a_debate_that_stopped_early_shows_the_check_that_ended_it(tmp_path: Path) -> None:
    def agreeing(request: GenerationRequest) -> str:  # every referee, every time: 7 against 3
        return (
            "Assistant 1: 7\nAssistant 2: 3\nEvidence: same"
            if asks_for_scores(request)
            else hostile_referee(request)
        )

    early = tmp_path / "early"
    run(
        quickstart_config(name="early", early_stop=True),
        early,
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, agreeing)},
    )
    page = render([early], tmp_path / "report")
    section = first_section(page)
    assert section.count("<h4>Early stop: unanimous after round 1</h4>") == 2
    assert "<h4>Round 2</h4>" not in section and "· stopped early</h3>" in section
    assert "early-stop check: scores" in section and "hidden turns" not in section
    assert page.count("<td>yes</td></tr>") == 12  # the index's early-stop column, every item


def test_runs_of_different_tasks_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(DataError, match="runs of one task side by side"):
        write_html_report([runs["plain"], runs["direct"]], tmp_path)


def test_a_direct_run_shows_scores_per_dimension(runs: dict[str, Path], tmp_path: Path) -> None:
    page = render([runs["direct"]], tmp_path)
    assert len(ROW.findall(page)) == 6 and len(SECTION.findall(page)) == 6
    assert 'data-filter="wrong"' not in page and 'data-filter="split"' in page
    assert "<th>human naturalness</th>" in page and "<th>groundedness</th>" in page
    assert "<th>Spearman rho [95% CI]</th>" in page and "<td>average</td>" in page
    assert "scores naturalness 1-3, coherence 1-3, engagingness 1-3, groundedness 0-1" in page
    section = first_section(page)
    assert "<b>Conversation</b>" in section and "<b>Response</b>" in section
    assert "The mean of the referees&#39; scores per dimension: naturalness" in section
    assert "&lt;script&gt;alert" in section and "<script>alert" not in page


def test_a_big_run_gets_one_page_per_item(runs: dict[str, Path], tmp_path: Path) -> None:
    index = write_html_report([runs["summarized"]], tmp_path, split_above_mb=0.01)
    page = index.read_text(encoding="utf-8")
    assert not SECTION.search(page) and 'href="items/item-1.html"' in page
    pages = sorted(p.name for p in (tmp_path / "items").iterdir())
    assert len(pages) == 12 and "item-12.html" in pages
    item = (tmp_path / "items" / "item-1.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" in item and 'href="../report.html"' in item
    assert '<section class="item standalone" id="item-1">' in item and "<script>" not in item
    second = (tmp_path / "items" / "item-2.html").read_text(encoding="utf-8")
    assert (
        '<a href="item-1.html">previous item</a>' in second
        and '<a href="item-3.html">next item</a>' in second
    )
    write_html_report([runs["summarized"]], tmp_path)  # small enough again: one page
    assert not list((tmp_path / "items").glob("item-*.html"))
    assert len(SECTION.findall(index.read_text(encoding="utf-8"))) == 12


def test_a_non_positive_split_size_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(runs["plain"]), "--split-above", "0"])
    assert result.exit_code != 0 and "--split-above must be a positive size" in result.output


def test_compressed_transcripts_still_show_every_debate(runs: dict[str, Path], tmp_path: Path) -> None:
    """A run kept for reading (docs/results) may hold transcripts.jsonl.gz instead."""
    import gzip
    import shutil

    kept = tmp_path / "kept"
    shutil.copytree(runs["summarized"], kept)
    transcripts = kept / "transcripts.jsonl"
    (kept / "transcripts.jsonl.gz").write_bytes(gzip.compress(transcripts.read_bytes()))
    transcripts.unlink()
    page = render([kept], tmp_path / "report")
    section = first_section(page)
    assert section.count("<h4>Round 2</h4>") == 2 and "summary for Everyday Reader after round 1" in section
