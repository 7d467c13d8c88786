"""The records a run writes per item and per debate (verdicts.jsonl, transcripts.jsonl)."""

from collections.abc import Mapping, Sequence

from chateval.core.items import DirectItem, PairwiseItem
from chateval.core.transcript import Debate, Utterance
from chateval.debate.behaviour import EchoDetector, debate_behaviour
from chateval.debate.panel import Panel
from chateval.engines.context import Truncation
from chateval.evaluation.diagnostics.cut_off import referee_cut_off, summaries_cut_off
from chateval.judging.aggregate import add_pairwise_item, aggregate_direct, aggregate_pairwise
from chateval.judging.formats import DirectFormat, PairwiseFormat
from chateval.schema.transcripts import ReusedFrom, TranscriptMessage, TranscriptRecord
from chateval.schema.verdicts import RefereeRow, VerdictRecord


def item_records(debates: Sequence[Debate], panel: Panel) -> list[VerdictRecord]:
    """One verdict record per item, in item order (both orders of an item together)."""
    fmt = panel.verdict_format
    detector = EchoDetector(panel.prompts.instruction_texts())
    groups: dict[str, list[Debate]] = {}
    for debate in debates:
        groups.setdefault(debate.item.id, []).append(debate)
    records: list[VerdictRecord] = []
    for group in groups.values():
        item = group[0].item
        rows: list[tuple[Debate, list[RefereeRow]]] = []
        if isinstance(fmt, PairwiseFormat) and isinstance(item, PairwiseItem):
            record = aggregate_pairwise(group, fmt, panel.opinion_probes, panel.failure_ties)
            add_pairwise_item(record, item)
            rows = [(d, order["referees"]) for d, order in zip(group, record["orders"], strict=True)]
        elif isinstance(fmt, DirectFormat) and isinstance(item, DirectItem):
            record = aggregate_direct(group[0], fmt, panel.opinion_probes)
            record["human_scores"] = dict(item.scores) or None
            record["response_words"] = len(item.response.split())  # the length baseline's prediction
            if item.group is not None:
                record["group"] = item.group
            if item.system is not None:
                record["system"] = item.system
                if item.group is not None:
                    record["prompt"] = item.group
            rows = [(group[0], record["referees"])]
        else:
            raise TypeError(f"item {item.id!r}: a {type(item).__name__} cannot take a {type(fmt).__name__}")
        if item.category is not None:
            record["category"] = item.category
        for debate, referees in rows:
            behaviour = debate_behaviour(debate, panel, detector)
            for row in referees:
                row["parroting"] = behaviour[row["agent"]].as_dict()
                row["cut_off"] = referee_cut_off(debate, row["agent"])
        summaries = summaries_cut_off(group)
        if summaries["summaries"]:
            record["cut_off"] = summaries
        records.append(record)
    return records


def mark_truncated(records: Sequence[VerdictRecord], truncations: Mapping[str, Sequence[Truncation]]) -> None:
    """Say in each record which fields of which model's prompt were cut to fit (None: none)."""
    for record in records:
        cuts = truncations.get(record["item_id"])
        record["truncated"] = {c.model: c.fields for c in cuts} if cuts else None


def stopped_early(debate: Debate) -> bool:
    """The debate ended at an early-stop check (its verdicts are check answers)."""
    return any(u.kind == "verdict" and u.turn.kind == "check" for u in debate.transcript.utterances)


def transcript_record(
    debate: Debate, names: Sequence[str], reused: ReusedFrom | None = None
) -> TranscriptRecord:
    """``debate`` as transcripts.jsonl keeps it; ``names``: the referees' names in panel order
    (a summary names the referee it was written for); ``reused``: where the judgment store's
    copy of it was judged, when the run took it from there."""
    record: TranscriptRecord = {
        "key": debate.key,
        "item_id": debate.item.id,
        "swapped": debate.swapped,
        "messages": [_message(u, names) for u in debate.transcript.utterances],
    }
    if reused is not None:
        record["reused"] = reused
    return record


def _message(u: Utterance, names: Sequence[str]) -> TranscriptMessage:
    message: TranscriptMessage = {
        "round": u.turn.round,
        "speaker": u.speaker,
        "kind": u.kind,
        "turn": u.turn.kind,
        "probe": u.turn.hidden,  # hidden: an opinion probe or an early-stop check
        "scoring": u.turn.scoring,  # the scores that continue the assessment before
        "text": u.text,
        "finish_reason": u.finish_reason,
        "tokens": u.tokens,  # generated tokens
    }
    if u.turn.is_summary and u.turn.agent is not None:
        message["for_referee"] = names[u.turn.agent]
    return message
