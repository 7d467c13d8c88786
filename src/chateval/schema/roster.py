"""roster.json: who judged (the referees with their roles' texts and models) and which weights
served each model."""

from typing import NotRequired

from typing_extensions import TypedDict

from chateval.schema.base import record_schema


@record_schema
class RosterReferee(TypedDict):
    """A referee as the panel had it: its speaker name, its role's name and text, its model."""

    name: str
    role: str
    role_text: str
    model: str


@record_schema
class RosterModel(TypedDict):
    """A model as the run used it: what served it, and which weights (chateval.record.roster)."""

    backend: str  # vllm, transformers, openai, ...; the class's name for a backend handed in
    replicas: int
    path: str | None  # the resolved model folder (None: served without a local copy, or handed in)
    # sha256 over the folder's file names and sizes, small files whole and each large file's
    # first and last MiB (None: no folder)
    fingerprint: str | None
    server: str | None  # a served model's base URL
    dtype: str | None
    max_model_len: int | None
    # The default system prompt the model's chat template would add to a chat without one,
    # replaced by an empty system message (None: it adds none; absent: a run made before chateval
    # read it)
    replaced_system_prompt: NotRequired[str | None]


@record_schema
class Roster(TypedDict):
    """roster.json: the panel that judged (the speakers' names, roles and models) and the
    models' weights, written with the run's results. ``rebuilt``: read from a folder of a release
    before roster.json, rebuilt from its config.yaml with this release's role texts."""

    referees: list[RosterReferee]
    summarizer_model: str
    prompt_style: str
    models: dict[str, RosterModel]
    rebuilt: NotRequired[bool]
