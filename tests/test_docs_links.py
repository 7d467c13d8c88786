"""Every relative link in README.md and docs/ points at a file that exists and, with an anchor,
at a heading of that file (GitHub's anchors: lower case, punctuation dropped, each space a dash,
inline code's text kept; the docs site makes the same ones: mkdocs.yml's slugify)."""

import re
from pathlib import Path

from tests.support.helpers import ROOT

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(path: Path, keep_code: bool = False) -> list[tuple[int, str]]:
    """The file's lines outside code fences, inline code removed (or, with ``keep_code``, its
    text kept without the backticks)."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append((number, re.sub(r"`([^`]*)`", r"\1" if keep_code else "", line)))
    return out


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path, keep_code=True):
        if match := HEADING.match(line):
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2).strip().lower())
            slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
            repeat = seen.get(slug, 0)
            found.add(slug if repeat == 0 else f"{slug}-{repeat}")
            seen[slug] = repeat + 1
    return found


def test_relative_links_in_the_docs_resolve() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, line in prose_lines(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, mailto: ...: not ours to check offline
                file_part, _, anchor = target.partition("#")
                dest = (page.parent / file_part).resolve() if file_part else page
                where = f"{page.relative_to(ROOT)}:{number}: {target}"
                if not dest.exists():
                    broken.append(f"{where} (no such file)")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{where} (no such heading)")
    assert not broken, "\n".join(broken)
