"""FairEval (Vicuna-80) loaders: the raw FairEval release and ChatEval's preprocessed file.

Raw release (``format: faireval``; ``path`` is the release folder): ``question.jsonl``,
``answer/answer_<model>.jsonl`` and ``review/review_<a>_<b>_human.txt`` (one aggregated human
label per line). Only gpt35 vs vicuna-13b carries human labels; other pairs load unlabelled.
Items name their systems (``system_a``, ``system_b``) and prompt (the question id).

The same release as responses data (``format: faireval_systems``): one row per question and
system (``data.systems``, default every answer file), compared as ``data.compare`` says
(data/responses.py), with the human labels on the comparisons of a labelled pair.

ChatEval's file (``format: chateval_faireval``; ``path`` is ``test.json``): a list of
``{question_id, question, response: {model: text}, human_results}``.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from chateval.core.items import Item, PairwiseItem, Response, Responses
from chateval.core.textfile import read_jsonl, read_utf8
from chateval.data.jsonl import category, read_json_list, text_field
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import DataConfig

# How the human review file names each labelled system.
_REVIEW_NAMES = {"gpt35": "CHATGPT", "vicuna-13b": "VICUNA13B"}


def _answers(folder: Path, model: str) -> dict[int, str]:
    path = folder / "answer" / f"answer_{model}.jsonl"
    if not path.is_file():
        known = sorted(p.stem.removeprefix("answer_") for p in (folder / "answer").glob("answer_*.jsonl"))
        raise DataError(f"{path}: no answers for model {model!r}; available: {', '.join(known) or 'none'}")
    answers: dict[int, str] = {}
    for number, record in read_jsonl(path):
        qid = record.get("question_id")
        if not isinstance(qid, int):
            raise DataError(f"{path}:{number}: field 'question_id' must be an integer")
        answers[qid] = text_field(record, "text", f"{path}:{number}")
    return answers


def _review_labels(folder: Path, a: str, b: str, count: int) -> list[Label] | None:
    """Human labels in (a, b) terms, or None when no review file covers this pair."""
    for first, second in ((a, b), (b, a)):
        path = folder / "review" / f"review_{first}_{second}_human.txt"
        if path.is_file():
            break
    else:
        return None
    mapping: dict[str, Label] = {"TIE": "tie"}
    if a in _REVIEW_NAMES:
        mapping[_REVIEW_NAMES[a]] = "A"
    if b in _REVIEW_NAMES:
        mapping[_REVIEW_NAMES[b]] = "B"
    lines = [line.strip() for line in read_utf8(path).splitlines()]
    if len(lines) != count:
        raise DataError(f"{path}: {len(lines)} labels for {count} questions")
    labels: list[Label] = []
    for number, value in enumerate(lines, start=1):
        if value not in mapping:
            raise DataError(f"{path}:{number}: label {value!r}; allowed: {', '.join(sorted(mapping))}")
        labels.append(mapping[value])
    return labels


def load_faireval(data: "DataConfig") -> list[Item]:
    """Load the raw FairEval release as pairwise items (default pair gpt35 vs vicuna-13b)."""
    folder = data.file
    a, b = data.pair or ("gpt35", "vicuna-13b")
    questions_path = folder / "question.jsonl"
    if not questions_path.is_file():
        raise DataError(f"{questions_path}: not found (path must be the FairEval release folder)")
    questions = read_jsonl(questions_path)
    answers_a, answers_b = _answers(folder, a), _answers(folder, b)
    labels = _review_labels(folder, a, b, len(questions))
    items: list[Item] = []
    for index, (number, record) in enumerate(questions):
        where = f"{questions_path}:{number}"
        qid = record.get("question_id")
        if not isinstance(qid, int):
            raise DataError(f"{where}: field 'question_id' must be an integer")
        for model, answers in ((a, answers_a), (b, answers_b)):
            if qid not in answers:
                raise DataError(f"{folder}/answer/answer_{model}.jsonl: no answer for question_id {qid}")
        items.append(
            PairwiseItem(
                id=str(qid),
                question=text_field(record, "text", where),
                answer_a=answers_a[qid],
                answer_b=answers_b[qid],
                label=labels[index] if labels else None,
                system_a=a,
                system_b=b,
                prompt=str(qid),
                category=category(record, data.fields.category, where),
            )
        )
    return items


def _available(folder: Path) -> list[str]:
    """The systems with an answer file, by name."""
    return sorted(p.stem.removeprefix("answer_") for p in (folder / "answer").glob("answer_*.jsonl"))


def load_faireval_systems(data: "DataConfig") -> Responses:
    """The raw FairEval release as responses: every question answered by each system."""
    folder = data.file
    questions_path = folder / "question.jsonl"
    if not questions_path.is_file():
        raise DataError(f"{questions_path}: not found (path must be the FairEval release folder)")
    questions = read_jsonl(questions_path)
    systems = list(data.systems) if data.systems is not None else _available(folder)
    answers = {system: _answers(folder, system) for system in systems}
    rows: list[Response] = []
    qids: list[str] = []
    for number, record in questions:
        where = f"{questions_path}:{number}"
        qid = record.get("question_id")
        if not isinstance(qid, int):
            raise DataError(f"{where}: field 'question_id' must be an integer")
        question = text_field(record, "text", where)
        kind = category(record, data.fields.category, where)
        qids.append(str(qid))
        rows += [
            Response(str(qid), question, system, answers[system][qid], where, category=kind)
            for system in systems
            if qid in answers[system]
        ]
    labels: dict[tuple[str, str, str], Label] = {}
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            pair_labels = _review_labels(folder, a, b, len(questions))
            if pair_labels is not None:
                labels |= {(qid, a, b): label for qid, label in zip(qids, pair_labels, strict=True)}
    return Responses(str(folder), rows, labels)


def load_chateval_faireval(data: "DataConfig") -> list[Item]:
    """Load ChatEval's preprocessed FairEval ``test.json`` (default pair gpt35 vs vicuna)."""
    path = data.file
    a, b = data.pair or ("gpt35", "vicuna")
    records = read_json_list(path)
    label_map: dict[str, Label] = {a: "A", b: "B", "tie": "tie"}
    items: list[Item] = []
    for index, record in enumerate(records):
        where = f"{path}: item {index}"
        if not isinstance(record, dict) or not isinstance(record.get("response"), dict):
            raise DataError(f"{where}: expected an object with a 'response' mapping")
        human = record.get("human_results")
        if human is not None and human not in label_map:
            raise DataError(f"{where}: field 'human_results' is {human!r}; allowed: {', '.join(label_map)}")
        items.append(
            PairwiseItem(
                id=str(record.get("question_id", index)),
                question=text_field(record, "question", where),
                answer_a=text_field(record["response"], a, f"{where}, response"),
                answer_b=text_field(record["response"], b, f"{where}, response"),
                label=label_map[human] if human is not None else None,
                category=category(record, data.fields.category, where),
            )
        )
    return items
