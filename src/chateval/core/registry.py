"""A tiny name -> object registry used for strategies, backends and data loaders, and the hint
every "unknown name" message gives."""

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from chateval.errors import ConfigError

T = TypeVar("T")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"did you mean X? "`` for the known name closest to a misspelt ``name``; "" when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean {close[0]}? " if close else ""


class Registry(Generic[T]):
    """Maps unique names to objects; registering a name twice is an error."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator that registers the decorated object under ``name``."""

        def decorate(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"duplicate {self.kind} name {name!r}")
            self._entries[name] = obj
            return obj

        return decorate

    def get(self, name: str) -> T:
        """Return the entry called ``name`` or raise ConfigError listing the known names."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "(none)"
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))
