"""The one registry type (chateval.core.registry): built-ins imported on first use, objects
registered in this process, and plugins read from their entry-point group once, with errors
that name both sides of a clash and the distribution of a plugin that fails."""

import sys
from pathlib import Path

import pytest

from chateval.core.registry import Registry
from chateval.errors import ConfigError
from tests.support.plugins import on_path, write_distribution

GROUP = "chateval_tests.things"


def _site(tmp_path: Path, entries: dict[str, str], source: str = "SQUARE = 'square'\n") -> Path:
    """A folder with the module ``builtin_shapes`` (always importable) and the distribution
    toy-shapes, whose entry points in GROUP are ``entries``."""
    (tmp_path / "builtin_shapes.py").write_text("CIRCLE = 'circle'\n", encoding="utf-8")
    return write_distribution(tmp_path, "toy-shapes", {GROUP: entries}, {"plugin_shapes.py": source})


def test_a_built_in_is_imported_on_first_use_and_a_plugin_joins_it(tmp_path: Path) -> None:
    with on_path(_site(tmp_path, {"square": "plugin_shapes:SQUARE"})):
        things = Registry[str]("thing", GROUP, {"circle": "builtin_shapes:CIRCLE"})
        assert things.names() == ["circle", "square"] and "square" in things
        assert "builtin_shapes" not in sys.modules and "plugin_shapes" not in sys.modules  # names only
        assert things.get("circle") == "circle" and things.get("square") == "square"
        assert things.items() == [("circle", "circle"), ("square", "square")]
        assert (
            things.origin("square")
            == "entry point 'square = plugin_shapes:SQUARE' of distribution toy-shapes 0.1"
        )
        assert things.origin("circle") == "built-in builtin_shapes:CIRCLE"
    things.forget_plugins()
    assert things.names() == ["circle"]  # the plugin's distribution is gone


def test_an_unknown_name_gets_the_closest_and_every_known_one(tmp_path: Path) -> None:
    with on_path(_site(tmp_path, {"square": "plugin_shapes:SQUARE"})):
        things = Registry[str]("thing", GROUP, {"circle": "builtin_shapes:CIRCLE"})
        with pytest.raises(
            ConfigError, match=r"^unknown thing 'sqare' \(did you mean square\?\); known: circle, square$"
        ):
            things.get("sqare")
        assert things.unknown("hexagon") == "unknown thing 'hexagon'; known: circle, square"


def test_a_plugin_that_takes_a_built_in_name_is_refused_naming_both(tmp_path: Path) -> None:
    with on_path(_site(tmp_path, {"circle": "plugin_shapes:SQUARE"})):
        things = Registry[str]("thing", GROUP, {"circle": "builtin_shapes:CIRCLE"})
        with pytest.raises(ConfigError) as caught:
            things.names()
    assert str(caught.value) == (
        "thing 'circle' is taken twice: entry point 'circle = plugin_shapes:SQUARE' of distribution "
        f"toy-shapes 0.1 (group {GROUP}) and built-in builtin_shapes:CIRCLE; rename or uninstall one"
    )


def test_a_plugin_that_fails_to_import_names_its_entry_point_and_distribution(tmp_path: Path) -> None:
    site = _site(tmp_path, {"square": "plugin_shapes:SQUARE"}, source="import no_such_module\n")
    with on_path(site):
        things = Registry[str]("thing", GROUP)
        assert things.names() == ["square"]  # listing imports nothing
        with pytest.raises(ConfigError) as caught:
            things.get("square")
    assert str(caught.value) == (
        "thing 'square': entry point 'square = plugin_shapes:SQUARE' of distribution toy-shapes 0.1 "
        f"(group {GROUP}) failed to import: ModuleNotFoundError: No module named 'no_such_module'"
    )


def test_a_registered_object_takes_its_name_once() -> None:
    things = Registry[object]("thing", GROUP)
    marker = object()
    assert things.register("marker")(marker) is marker
    things.register("marker")(marker)  # the same object again: nothing changes
    with pytest.raises(ValueError, match="duplicate thing name 'marker': registered in this process has it"):
        things.register("marker")(object())
    assert things.get("marker") is marker and things.origin("marker") == "registered in this process"
    things.remove("marker")
    assert "marker" not in things
