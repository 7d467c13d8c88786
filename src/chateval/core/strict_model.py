"""The base of every settings model: unknown keys are errors (a typo is not a default), and a
model, once validated, does not change."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
