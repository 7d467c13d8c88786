"""What every record type shares: ``record_schema``, which makes a type's unknown keys an error
when pydantic reads a file through it, and the label of a pairwise comparison."""

from typing import Literal

from pydantic import ConfigDict, with_config

# The record types of the run folder's files (TypedDicts) are read through pydantic: a key
# their type does not know is an error there too, not silently dropped.
record_schema = with_config(ConfigDict(extra="forbid"))

Label = Literal["A", "B", "tie"]  # A's answer is better, B's, or neither
