"""The registry of data loaders: a loader turns a local file into a list of items."""

from collections.abc import Callable
from pathlib import Path

from chateval.data.items import Item
from chateval.registry import Registry

Loader = Callable[[Path], list[Item]]

LOADERS: Registry[Loader] = Registry("data format")
