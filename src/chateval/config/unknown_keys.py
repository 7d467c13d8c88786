"""The message for a key a settings model does not have: ``unknown key``, with the closest key
the section knows and every key it allows, so that a typo anywhere in a config (a top-level
key, ``sampling.temprature``, a union's mapping such as ``data.compare: {againts: X}``) points
at what was meant."""

import typing
from typing import Any

from pydantic import BaseModel

from chateval.core.registry import did_you_mean


def settings_models(annotation: Any) -> list[type[BaseModel]]:
    """The settings models a field's type holds (through ``X | Y``, ``None``, lists and mappings)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in settings_models(argument)]


def unknown_key(loc: tuple[int | str, ...], root: type[BaseModel]) -> str:
    """``unknown key`` at ``loc`` (pydantic's place of the key, from ``root``), with the closest
    known key and every one the section allows."""
    model: type[BaseModel] | None = root
    members: list[type[BaseModel]] = []  # the models the last field may hold (a union's members)
    for part in loc[:-1]:
        if isinstance(part, int):
            continue  # a list's position
        named = [m for m in members if m.__name__ == part]
        if named:  # pydantic names the union member it tried: the section is that model
            model = named[0]
            continue
        field = None if model is None else model.model_fields.get(part)
        members = [] if field is None else settings_models(field.annotation)
        model = members[0] if members else None
    if model is None:
        return "unknown key"
    known = list(model.model_fields)
    return f"unknown key ({did_you_mean(str(loc[-1]), known)}known: {', '.join(known)})"
