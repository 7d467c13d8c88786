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


def test_clicking_an_item_shows_its_view_and_only_its_view(report: Path) -> None:
    # A harness page loads report.html#item-1 in a frame and measures the item sections
    # (file:// pages may read each other with --allow-file-access-from-files).
    harness = report.parent / "harness.html"
    harness.write_text(
        '<!doctype html><title>pending</title><iframe src="report.html#item-1" onload="'
        "const d=this.contentDocument;document.title='heights '+"
        "d.getElementById('item-1').offsetHeight+' '+d.getElementById('item-2').offsetHeight\"></iframe>",
        encoding="utf-8",
    )
    dom = chromium("--allow-file-access-from-files", "--dump-dom", harness.as_uri()).stdout
    match = re.search(r"<title>heights (\d+) (\d+)</title>", dom)
    assert match, dom[:500]
    assert int(match.group(1)) > 300 and int(match.group(2)) == 0
