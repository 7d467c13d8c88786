"""Topical-Chat with USR human scores, in UniEval's format (``format: topical_chat``).

A JSON list of ``{source, context, system_id, system_output, scores}``: ``source`` is the
dialogue history (turns split by newlines), ``context`` the knowledge fact, ``system_output``
the response to judge and ``scores`` the mean of three annotators per dimension. Responses to
the same dialogue share a ``group``.
"""

from typing import TYPE_CHECKING

from chateval.core.items import DirectItem, Item
from chateval.data.jsonl import category, numeric_scores, read_json_list, text_field
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig


def _dialogue(source: str) -> str:
    """Label alternating turns so a referee can follow who said what."""
    turns = [t.strip() for t in source.split("\n") if t.strip()]
    speakers = ("A", "B")
    # The last turn is the partner of the responder; count back so it is always "B".
    offset = len(turns) % 2
    return "\n".join(f"{speakers[(i + offset) % 2]}: {t}" for i, t in enumerate(turns))


def load_topical_chat(data: "DataConfig") -> list[Item]:
    """Load UniEval's topical_chat.json as direct-scoring items (ids are the record index)."""
    path = data.file
    records = read_json_list(path)
    items: list[Item] = []
    dialogues: dict[str, str] = {}  # dialogue text -> its group name, in first-seen order
    for index, record in enumerate(records):
        where = f"{path}: item {index}"
        if not isinstance(record, dict):
            raise DataError(f"{where}: expected a JSON object")
        source = text_field(record, "source", where)
        items.append(
            DirectItem(
                id=str(index),
                context=_dialogue(source),
                response=text_field(record, "system_output", where),
                knowledge=text_field(record, "context", where, required=False),
                scores=numeric_scores(record, where),
                # Its 360 responses answer 60 dialogues: intervals resample whole dialogues.
                group=dialogues.setdefault(source, f"dialogue {len(dialogues)}"),
                category=category(record, data.fields.category, where),
            )
        )
    return items
