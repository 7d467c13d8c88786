"""No module over 400 lines, the package's and the scripts' alike (docs/architecture.md, "Tests"): a
module that outgrows it holds more than one job and is split along its seams, not squeezed."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOST_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    modules = sorted(path for folder in ("src", "scripts") for path in (ROOT / folder).rglob("*.py"))
    assert modules, "no modules found under src/ and scripts/"
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules
    }
    over = {name: lines for name, lines in sizes.items() if lines > MOST_LINES}
    assert not over, f"over {MOST_LINES} lines (split each along its seams): " + ", ".join(
        f"{name} ({lines})" for name, lines in over.items()
    )
