"""The registries of the choices a run config names and a stage above the config implements:
data formats and responses formats (``chateval.data``) and communication strategies
(``chateval.debate``). The backends' registry is ``chateval.core.backend_kinds``.

They live here, below the config, with their built-ins as ``"module:attribute"`` references,
so the config refuses a misspelt name early without importing the stages, and accepts the
name of a plugin that a distribution installed beside chateval declares in the registry's
entry-point group (docs/architecture.md, "Adding things"). A stage imports an entry on first
use (``chateval.data.load_items``, ``chateval.debate.strategies.get_strategy``).
"""

from collections.abc import Callable

from chateval.core.items import Item, Responses
from chateval.core.registry import Registry

# A data format's loader: the run config's ``data`` section (chateval.config.data.DataConfig,
# a type above this layer) -> the items, as they are to be judged.
ItemsLoader = Callable[..., list[Item]]
# A responses format's loader: the ``data`` section -> one row per (prompt, system), from which
# chateval.data.responses builds each comparison design's items.
ResponsesLoader = Callable[..., Responses]

DATA_FORMATS: Registry[ItemsLoader] = Registry(
    "data format",
    "chateval.data_formats",
    {
        "chateval_faireval": "chateval.data.faireval:load_chateval_faireval",
        "faireval": "chateval.data.faireval:load_faireval",
        "imported": "chateval.data.judgments:nothing_to_debate",
        "jsonl_direct": "chateval.data.jsonl:load_direct",
        "jsonl_pairwise": "chateval.data.jsonl:load_pairwise",
        "table_direct": "chateval.data.table:load_table_direct",
        "table_pairwise": "chateval.data.table:load_table_pairwise",
        "topical_chat": "chateval.data.topical_chat:load_topical_chat",
    },
)

RESPONSES_FORMATS: Registry[ResponsesLoader] = Registry(
    "responses data format",
    "chateval.responses_formats",
    {
        "faireval_systems": "chateval.data.faireval:load_faireval_systems",
        "jsonl_responses": "chateval.data.responses:load_jsonl_responses",
        "table_responses": "chateval.data.responses:load_table_responses",
    },
)

# Each a subclass of chateval.debate.strategies.Strategy (get_strategy checks).
STRATEGIES: Registry[type] = Registry(
    "strategy",
    "chateval.strategies",
    {
        "one_by_one": "chateval.debate.strategies:OneByOne",
        "simultaneous": "chateval.debate.strategies:Simultaneous",
        "simultaneous_summarizer": "chateval.debate.strategies:SimultaneousSummarizer",
    },
)


def data_format_names() -> list[str]:
    """Every format a config's ``data.format`` may name: the data formats and the responses
    formats, plugins' included."""
    return sorted(DATA_FORMATS.names() + RESPONSES_FORMATS.names())
