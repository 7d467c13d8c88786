"""The base of every settings model: unknown keys are errors (a typo is not a default), and a
model, once validated, does not change."""

from pydantic import BaseModel, ConfigDict, with_config


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# The record types of the run folder's files (TypedDicts) are read through pydantic: a key
# their type does not know is an error there too, not silently dropped.
record_schema = with_config(ConfigDict(extra="forbid"))
