"""How often the referees all gave the same verdict: a registered measure
(chateval.evaluation.measures), the first to plug in rather than cross the tree.

Pairwise: items where every referee's label (its scores summed over the answer orders it
judged) is the same; direct: items where every referee gave the same scores on every
dimension. Only items where every referee's verdict parsed count, and a one-referee panel has
nothing to say. A panel that is unanimous on nearly every item, while its accuracy is no
better than one referee's, is one whose discussion converges rather than adds.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from chateval.evaluation.measures import Section
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.measures import UnanimitySection
from chateval.schema.verdicts import VerdictRecord


def _verdicts(record: VerdictRecord, task: str) -> list[Any] | None:
    """Each referee's verdict on the item; None when one of them did not parse."""
    if task == "pairwise":
        labels = record.get("referee_labels") or {}
        referees = {row["agent"] for order in record.get("orders", []) for row in order["referees"]}
        return [labels[name] for name in sorted(referees)] if referees <= set(labels) else None
    rows = record.get("referees", [])
    scores = [row.get("scores") for row in rows]
    return None if any(s is None for s in scores) else [sorted((s or {}).items()) for s in scores]


class Unanimity:
    """The share of items on which every referee gave the same verdict."""

    name = "unanimity"
    title = "referees unanimous"
    schema = UnanimitySection  # its section's type: the record validates it on read

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        found = [v for r in records if (v := _verdicts(r, settings.task)) is not None]
        judged = [v for v in found if len(v) > 1]
        if not judged:
            return None  # one referee, or no item where every verdict parsed
        unanimous = sum(all(v == verdicts[0] for v in verdicts) for verdicts in judged)
        return {"items": len(judged), "unanimous": unanimous, "share": unanimous / len(judged)}

    def text(self, section: Mapping[str, Any]) -> str:
        items, unanimous = section["items"], section["unanimous"]
        return f"{unanimous} of {items} items ({section['share']:.0%}) with every referee's verdict parsed"


UNANIMITY = Unanimity()
