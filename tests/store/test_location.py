"""Where the judgment store lives by default: $CHATEVAL_CACHE (or off), else the XDG cache."""

from pathlib import Path

import pytest

from chateval.store.location import default_store_folder


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CHATEVAL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_the_default_is_the_users_cache_folder(tmp_path: Path) -> None:
    assert default_store_folder() == tmp_path / "home" / ".cache" / "chateval"


def test_xdg_cache_home_moves_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_store_folder() == tmp_path / "xdg" / "chateval"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # invalid by the XDG spec: ignored
    assert default_store_folder() == tmp_path / "home" / ".cache" / "chateval"


def test_chateval_cache_names_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CHATEVAL_CACHE", str(tmp_path / "shared"))
    assert default_store_folder() == tmp_path / "shared"
    monkeypatch.setenv("CHATEVAL_CACHE", "~/team-cache")
    assert default_store_folder() == tmp_path / "home" / "team-cache"


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "No", " off "])
def test_chateval_cache_turns_it_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CHATEVAL_CACHE", value)
    assert default_store_folder() is None
