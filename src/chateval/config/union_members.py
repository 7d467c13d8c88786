"""A setting that takes several forms (a union of a name and a mapping): its mapping validated
as the one model it can be, so that a mistake in it reads as one message in that model's terms
(each problem led by its key), not as pydantic's message per member of the union."""

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chateval.config.unknown_keys import unknown_key

Member = TypeVar("Member", bound=BaseModel)


def validate_member(model: type[Member], value: Any) -> Member:
    """``value`` validated as ``model``; a ValueError of one message naming each problem's key
    (``unknown key`` for a key ``model`` does not have, with the closest one it has)."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = [
            (f"{'.'.join(str(p) for p in err['loc'])}: " if err["loc"] else "")
            + (unknown_key(err["loc"], model) if err["type"] == "extra_forbidden" else err["msg"])
            for err in exc.errors()
        ]
        raise ValueError("; ".join(p.replace("Value error, ", "") for p in problems)) from None
