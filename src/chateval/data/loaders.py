"""The registry of data loaders: a loader turns a data config into a list of items."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from chateval.data.items import Item
from chateval.registry import Registry

if TYPE_CHECKING:
    from chateval.config import DataConfig

Loader = Callable[["DataConfig"], list[Item]]

LOADERS: Registry[Loader] = Registry("data format")
