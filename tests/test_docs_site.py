"""The documentation site (mkdocs.yml) as a reader opens it from the file system: it builds with
--strict, no page loads anything from another machine (scripts, styles, fonts), and its search
answers in headless Chromium with no server, through the site's own worker stand-in
(docs/javascripts/iframe-worker-shim.js)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

pytestmark = pytest.mark.slow  # a whole site build and a real browser: seconds, not milliseconds

# What a page would fetch by itself: scripts, stylesheets, fonts, pictures (links a reader
# clicks are not loads).
LOADS = re.compile(r'<(?:script|img|link)\b[^>]*\b(?:src|href)="(https?:)?//[^"]*"', re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_no_page_loads_anything_from_another_machine(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 15
    loads = {str(p.relative_to(site)): LOADS.findall(p.read_text(encoding="utf-8")) for p in pages}
    remote = {page: found for page, found in loads.items() if found}
    assert not remote, remote


def test_search_answers_from_the_file_system(site: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (scripts/setup.sh installs Debian's chromium)")
    url = (site / "index.html").as_uri() + "?q=judgment%20store"  # Material opens search with ?q=
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000"]
    done = subprocess.run([*command, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'md-search-result__meta">(\d+) matching documents?<', done.stdout)
    assert found and int(found.group(1)) > 0, done.stdout[-2000:]
    # the section that answers it, found in the page that holds it
    assert "systems.html?h=judgment+store#the-judgment-store-a-standing-leaderboard" in done.stdout
