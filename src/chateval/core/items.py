"""The records a run evaluates: pairwise items (two answers) and direct items (one response);
and the "responses" shape (one response of a system to a prompt per row) they can be built from."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from chateval.schema.base import Label

LABELS: tuple[Label, ...] = ("A", "B", "tie")


@dataclass(frozen=True)
class EarlierTurn:
    """A turn of a conversation before the judged one: the user's message and each assistant's
    reply to it (each system answered the earlier turns in its own words, as MT-Bench's second
    turn has it)."""

    question: str
    answer_a: str
    answer_b: str


@dataclass(frozen=True)
class PairwiseItem:
    """A question and two answers; ``label`` is the human verdict when known.

    ``system_a`` and ``system_b`` name the systems that wrote the answers, when the data says;
    ``prompt`` is the id of the prompt the comparison belongs to (several comparisons of one
    prompt share it, and statistics over systems resample prompts); ``category`` the category
    the data puts it in (``fields.category``), for figures per category. ``earlier`` holds the
    conversation's turns before the judged one (``data.turn``), quoted to the referees before the
    question; ``earlier_left_out`` counts the first turns cut to fit a model's context.
    """

    id: str
    question: str
    answer_a: str
    answer_b: str
    label: Label | None = None
    system_a: str | None = None
    system_b: str | None = None
    prompt: str | None = None
    category: str | None = None
    earlier: tuple[EarlierTurn, ...] = ()
    earlier_left_out: int = 0


# The field an item's cuts (a verdict record's ``truncated``) name for the turns before the
# judged one (``PairwiseItem.earlier``), counted in turns; every other cut field is in tokens.
EARLIER_TURNS = "earlier_turns"


@dataclass(frozen=True)
class DirectItem:
    """A conversation context, an optional knowledge fact and the response to score.

    ``scores`` holds human scores per dimension when known. ``group`` names the cluster the
    item belongs to when several responses answer one context (Topical-Chat: 6 responses per
    dialogue); confidence intervals then resample whole groups. ``system`` names the system that
    wrote the response, when the data says (built from responses data: ``group`` is the prompt);
    ``category`` the category the data puts it in (``fields.category``).
    """

    id: str
    context: str
    response: str
    knowledge: str = ""
    scores: Mapping[str, float] = field(default_factory=dict)
    group: str | None = None
    system: str | None = None
    category: str | None = None


@dataclass(frozen=True)
class Response:
    """One row of responses data: what ``system`` answered to prompt ``prompt``.

    ``where`` locates the row for error messages (file:line); ``scores`` holds human scores
    per dimension when known (direct scoring).
    """

    prompt: str
    question: str
    system: str
    response: str
    where: str
    scores: Mapping[str, float] = field(default_factory=dict)
    category: str | None = None  # the prompt's category, from the row or the questions file
    # With data.turn: the conversation's earlier turns, (the user's message, this system's reply)
    history: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Responses:
    """What a responses loader read: its rows, and human labels of some comparisons.

    ``labels`` maps (prompt, system_a, system_b) to the human label in that orientation (a
    comparison built the other way round gets the label flipped), ``label_where`` locates each
    label given in a labels file; ``source`` names the file or folder in error messages.
    """

    source: str
    rows: list[Response]
    labels: Mapping[tuple[str, str, str], Label] = field(default_factory=dict)
    label_where: Mapping[tuple[str, str, str], str] = field(default_factory=dict)


Item = PairwiseItem | DirectItem
