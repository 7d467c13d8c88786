"""Plugin distributions for tests: a package and its dist-info (METADATA and entry_points.txt)
written into a folder, which ``on_path`` puts on ``sys.path`` as an installed distribution,
then takes away with every module imported from it, each registry reading its entry points
again, so no other test sees the plugin."""

import importlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from chateval.core.registry import forget_plugins


def write_distribution(
    site: Path, name: str, entry_points: Mapping[str, Mapping[str, str]], modules: Mapping[str, str]
) -> Path:
    """Write the distribution ``name`` 0.1 into ``site``: ``modules`` (file path under
    ``site`` -> source) and ``entry_points`` (group -> entry name -> "module:attribute")."""
    for path, source in modules.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(source, encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    groups = [
        f"[{group}]\n" + "".join(f"{entry} = {value}\n" for entry, value in entries.items())
        for group, entries in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(groups), encoding="utf-8")
    return site


@contextmanager
def on_path(site: Path) -> Iterator[None]:
    """The distributions in ``site`` installed for the block, and gone after it."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    forget_plugins()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        for module_name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(str(site)):
                del sys.modules[module_name]
        importlib.invalidate_caches()
        forget_plugins()
