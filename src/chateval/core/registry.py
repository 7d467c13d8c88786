"""The one registry type: names mapped to what a stage implements (measures, data formats,
strategies, backends), and the hint every "unknown name" message gives.

A registry is filled three ways, and reads the same whichever way an entry came:

- built-ins, given as ``"module:attribute"`` references and imported on first use: nothing is
  imported to register anything, and a lower layer (the config) can hold the names a higher
  one implements without importing it;
- objects registered in this process (``register``, a decorator: a test's toy, a builder
  defined beside its registry);
- plugins: the entry points of the registry's group (``chateval.measures``, ...) that a
  distribution installed beside chateval declares, read once, on the first lookup or listing,
  and imported on first use.

A name is taken once: a plugin whose name another entry has is an error naming both, and a
plugin that fails to import is an error naming its entry point and its distribution.
"""

import difflib
import importlib
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar, cast

from chateval.errors import ConfigError

T = TypeVar("T")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"did you mean X? "`` for the known name closest to a misspelt ``name``; "" when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean {close[0]}? " if close else ""


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """The message for a ``name`` no registry of ``kind`` knows: the closest known name, if one
    is close, and every known name."""
    known = list(known)
    hint = did_you_mean(name, known).strip()
    shown = f" ({hint})" if hint else ""
    return f"unknown {kind} {name!r}{shown}; known: {', '.join(known) or '(none)'}"


def _import(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names (the attribute may be dotted)."""
    module, _, attribute = reference.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _distribution(point: EntryPoint) -> str:
    dist = point.dist
    return "an unnamed distribution" if dist is None else f"distribution {dist.name} {dist.version}"


class _Entry(Generic[T]):
    """One registered name: where it came from (for messages) and how to get its object, which
    is kept once loaded."""

    def __init__(self, origin: str, load: Callable[[], T]) -> None:
        self.origin = origin
        self._load: Callable[[], T] | None = load
        self._value: T | None = None

    @classmethod
    def held(cls, origin: str, obj: T) -> "_Entry[T]":
        """An entry of an object at hand (nothing to import)."""
        entry = cls(origin, lambda: obj)
        entry.value()
        return entry

    def value(self) -> T:
        if self._load is not None:
            self._value = self._load()
            self._load = None
        return cast(T, self._value)

    def holds(self, obj: object) -> bool:
        """Whether ``obj`` is this entry's object, already loaded."""
        return self._load is None and self._value is obj


def _builtin(reference: str) -> _Entry[Any]:
    if ":" not in reference:
        raise ValueError(f"a built-in reference is 'module:attribute', got {reference!r}")
    return _Entry(f"built-in {reference}", lambda: _import(reference))


def _plugin(kind: str, point: EntryPoint) -> _Entry[Any]:
    origin = f"entry point '{point.name} = {point.value}' of {_distribution(point)}"

    def load() -> Any:
        try:
            return point.load()
        except Exception as exc:  # whatever the plugin's import raises: name the plugin
            raise ConfigError(
                f"{kind} {point.name!r}: {origin} (group {point.group}) failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    return _Entry(origin, load)


# Every registry made, so that a test that put a plugin on the path can make each read its
# entry points again (forget_plugins).
_REGISTRIES: "weakref.WeakSet[Registry[Any]]" = weakref.WeakSet()


class Registry(Generic[T]):
    """Unique names mapped to objects: built-ins (objects, or ``"module:attribute"``
    references imported on first use), objects registered in this process, and the plugins of
    the entry-point group ``group`` (see the module's docstring)."""

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str | T] | None = None) -> None:
        self.kind = kind  # as messages name an entry: "data format", "strategy", ...
        self.group = group  # the entry-point group its plugins declare
        self._entries: dict[str, _Entry[T]] = {}
        for name, builtin in (builtins or {}).items():
            self._entries[name] = (
                _builtin(builtin) if isinstance(builtin, str) else _Entry.held("chateval's built-in", builtin)
            )
        self._plugins: dict[str, _Entry[T]] | None = None  # None: not read yet
        _REGISTRIES.add(self)

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator that registers the decorated object under ``name`` (a name taken by another
        entry is an error; the same object again changes nothing)."""

        def decorate(obj: T) -> T:
            taken = self._entries.get(name) or (self._plugins or {}).get(name)
            if taken is not None and not taken.holds(obj):
                raise ValueError(f"duplicate {self.kind} name {name!r}: {taken.origin} has it")
            if taken is None:
                self._entries[name] = _Entry.held("registered in this process", obj)
            return obj

        return decorate

    def remove(self, name: str) -> None:
        """Forget the entry ``name`` that is not a plugin (a test's toy); an unknown name is ignored."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The object registered as ``name`` (imported on first use), or a ConfigError naming
        the closest known name and listing every one."""
        entry = self._all().get(name)
        if entry is None:
            raise ConfigError(self.unknown(name))
        return entry.value()

    def unknown(self, name: str) -> str:
        """The message for ``name``, which this registry does not know."""
        return unknown_name(self.kind, name, self.names())

    def origin(self, name: str) -> str:
        """Where the entry ``name`` came from, for messages: a built-in's reference, this
        process, or a plugin's entry point and distribution."""
        entry = self._all().get(name)
        if entry is None:
            raise ConfigError(self.unknown(name))
        return entry.origin

    def names(self) -> list[str]:
        """Every name, sorted, plugins' included; nothing is imported."""
        return sorted(self._all())

    def items(self) -> list[tuple[str, T]]:
        """Every (name, object), each imported: built-ins and this process's in the order they
        were given, then the plugins by name."""
        return [(name, entry.value()) for name, entry in self._all().items()]

    def forget_plugins(self) -> None:
        """Read the entry points again at the next lookup (a test that changed ``sys.path``)."""
        self._plugins = None

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _all(self) -> dict[str, _Entry[T]]:
        if self._plugins is None:
            self._plugins = self._read_plugins()
        return self._entries | self._plugins

    def _read_plugins(self) -> dict[str, _Entry[T]]:
        found: dict[str, _Entry[T]] = {}
        for point in sorted(entry_points(group=self.group), key=lambda p: p.name):
            entry: _Entry[T] = _plugin(self.kind, point)
            taken = self._entries.get(point.name) or found.get(point.name)
            if taken is not None:
                raise ConfigError(
                    f"{self.kind} {point.name!r} is taken twice: {entry.origin} (group {self.group}) "
                    f"and {taken.origin}; rename or uninstall one"
                )
            found[point.name] = entry
        return found


def forget_plugins() -> None:
    """Make every registry read its entry points again at its next lookup (tests that put a
    plugin distribution on ``sys.path``, or took it off)."""
    for registry in list(_REGISTRIES):
        registry.forget_plugins()
