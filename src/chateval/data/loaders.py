"""The registries of data loaders: a loader turns a data config into a list of items; a
responses loader into responses rows, from which chateval builds the items (data/responses.py)."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from chateval.core.items import Item, Responses
from chateval.core.registry import Registry

if TYPE_CHECKING:
    from chateval.config.data import DataConfig

Loader = Callable[["DataConfig"], list[Item]]

LOADERS: Registry[Loader] = Registry("data format")

ResponsesLoader = Callable[["DataConfig"], Responses]

RESPONSE_LOADERS: Registry[ResponsesLoader] = Registry("responses data format")
