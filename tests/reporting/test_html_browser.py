"""The HTML report in a real browser: headless Chromium (Debian's package, which
scripts/setup.sh installs when missing) opens the page from disk, applies a filter, and takes
a screenshot; a script error or a blocked load in its log fails the test."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from chateval.engines.models import DEFAULT_MODEL
from chateval.reporting.html import write_html_report
from chateval.run.runner import run
from tests.support.helpers import quickstart_config
from tests.support.scripted import hostile_referee

pytestmark = pytest.mark.slow
# The systems sample's 4 prompts: win rates with exact intervals (the caption's first words).
WIN_RATES = (
    "Win rate against the field (every opponent, ties half) with 95% intervals (exact binomial, "
    "each prompt one unit); the dashed line marks 0.5."
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chateval.backends.scripted import ScriptedBackend

    out = tmp_path_factory.mktemp("run")
    run(quickstart_config(), out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile_referee)})
    return write_html_report([out], out / "report")


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (scripts/setup.sh installs Debian's chromium)")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for problem in ("Uncaught", "Refused to", "Content Security Policy"):
        assert problem not in done.stderr, done.stderr[-2000:]
    return done


def shown(dom: str) -> int:
    match = re.search(r'<span id="shown">(\d+)</span>', dom)
    assert match, "the page has no row counter"
    return int(match.group(1))


def test_a_filter_changes_the_visible_rows_and_a_screenshot_is_taken(report: Path, tmp_path: Path) -> None:
    url = report.resolve().as_uri()
    everything = shown(chromium("--dump-dom", url).stdout)
    wrong = chromium("--dump-dom", url + "#filter=wrong").stdout
    assert everything == 12 and 0 < shown(wrong) < 12
    assert wrong.count('style="display: none;"') == 12 - shown(wrong)
    picture = tmp_path / "report.png"
    chromium("--window-size=1200,900", f"--screenshot={picture}", url)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def framed_title(folder: Path, src: str, onload: str, prefix: str) -> str:
    """Load ``src`` (a page in ``folder``) in a harness page's frame whose ``onload`` script
    measures it and writes the result into the harness's title after ``prefix`` (file:// pages
    may read each other with --allow-file-access-from-files); the title's rest."""
    harness = folder / "harness.html"
    harness.write_text(
        f'<!doctype html><title>pending</title><iframe src="{src}" onload="{onload}"></iframe>',
        encoding="utf-8",
    )
    dom = chromium("--allow-file-access-from-files", "--dump-dom", harness.as_uri()).stdout
    match = re.search(rf"<title>{prefix} ([^<]*)</title>", dom)
    assert match, dom[:500]
    return match.group(1)


def test_clicking_an_item_shows_its_view_and_only_its_view(report: Path) -> None:
    # report.html#item-1 in a harness frame: the shown item's section has a height, the other none.
    heights = framed_title(
        report.parent,
        "report.html#item-1",
        "const d=this.contentDocument;document.title='heights '+"
        "d.getElementById('item-1').offsetHeight+' '+d.getElementById('item-2').offsetHeight",
        "heights",
    )
    match = re.fullmatch(r"(\d+) (\d+)", heights)
    assert match, heights
    assert int(match.group(1)) > 300 and int(match.group(2)) == 0


def test_every_picture_of_a_systems_run_is_present_and_drawn(systems_run: Path, tmp_path: Path) -> None:
    # The systems sample's page in a harness frame: each picture (an SVG data URI) is drawn on a
    # canvas and its pixels that are not white counted, so an empty or broken SVG fails.
    page = write_html_report([systems_run], tmp_path / "report")
    html = page.read_text(encoding="utf-8")
    said = re.findall(
        r'<figure class="picture"><img src="data:image/svg\+xml;base64,[^"]+" alt="([^"]+)"', html
    )
    assert [caption.split(":")[0] for caption in said] == ["Leaderboard", "Win rates", WIN_RATES, "Referees"]
    shown = framed_title(
        page.parent,
        "report.html",
        "const shown=[...this.contentDocument.querySelectorAll('figure.picture img')].map(img=>{"
        "const c=document.createElement('canvas');c.width=img.naturalWidth;c.height=img.naturalHeight;"
        "const g=c.getContext('2d');g.fillStyle='#fff';g.fillRect(0,0,c.width,c.height);g.drawImage(img,0,0);"
        "const p=g.getImageData(0,0,c.width,c.height).data;let ink=0;"
        "for(let i=0;i<p.length;i+=4){if(p[i]+p[i+1]+p[i+2]<720)ink++;}"
        "return img.naturalWidth+'x'+img.naturalHeight+':'+ink;});"
        "document.title='pictures '+shown.join(' ')",
        "pictures",
    )
    drawn = [re.fullmatch(r"(\d+)x(\d+):(\d+)", picture) for picture in shown.split()]
    assert len(drawn) == len(said) and all(drawn), shown
    for found in drawn:
        assert found is not None
        width, height, ink = (int(v) for v in found.groups())
        # Axes, labels and marks cover at least 2% of a picture; an empty SVG would cover none.
        assert width > 200 and height > 100 and ink > 0.02 * width * height, found.group(0)
