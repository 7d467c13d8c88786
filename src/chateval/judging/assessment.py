"""A referee's assessment: the free text of its verdict turn, written before its scores.

The assessment request is asked for the whole verdict in the paper's strict form
("Evaluation evidence: ..." then the score lines); where its answer starts writing scores (a
``Scores:`` line or the first score line), it is cut (``cut_assessment``), and the constrained
scores request continues the assessment after ``Scores:`` (``scoring_lead``): the scores come
from the constrained decoder only, never from free text that could disagree with them. So that
an explanation cannot be skipped, the assessment request is held to ``assessment_regex``: its
first words (after an optional "Evaluation evidence:" label) may not be a score line, a
``Scores:`` heading or a line break; what follows is free.
"""

import functools
import re
from collections.abc import Sequence
from typing import Any

# What the scoring request appends to a referee's assessment before its constrained score
# lines (which start on the next line).
SCORES_LEAD = "Scores:"
# The label the paper's strict format puts before the explanation.
EVIDENCE_LABEL = "Evaluation evidence:"


def scoring_lead(assessment: str) -> str:
    """The text a scoring request continues: the referee's assessment, then ``Scores:``."""
    return f"{assessment}\n\n{SCORES_LEAD}" if assessment else SCORES_LEAD


def verdict_text(assessment: str | None, scores: str) -> str:
    """A whole verdict as a later speaker sees it: the assessment and the score lines."""
    return f"{scoring_lead(assessment)}\n{scores}" if assessment is not None else scores


def cut_assessment(text: str, first_score_label: str) -> str:
    """``text`` up to where its writer starts its scores (a ``Scores:`` line, or the first score
    line, e.g. ``Assistant 1: 7``): the constrained request writes the scores from there. A
    lone "Evaluation evidence:" label with nothing after it is no explanation: empty."""
    start = re.search(
        rf"(?im)^[ \t*#]*(?:{re.escape(SCORES_LEAD)}|{re.escape(first_score_label)} ?:[ \t]*\d)", text
    )
    kept = (text[: start.start()] if start else text).strip()
    return "" if kept.lower().rstrip(" :") == EVIDENCE_LABEL.lower().rstrip(":") else kept


def explanation(assessment: str) -> str:
    """What an assessment explains, without the paper's "Evaluation evidence:" label."""
    if assessment[: len(EVIDENCE_LABEL)].lower() == EVIDENCE_LABEL.lower():
        return assessment[len(EVIDENCE_LABEL) :].strip()
    return assessment.strip()


def _escape(char: str) -> str:
    """``char`` as a regular expression (spaces and letters unescaped: the engines' regular
    expression syntax is not Python's, and both read them the same way bare)."""
    if char in "\n\t":
        return {"\n": r"\n", "\t": r"\t"}[char]
    return char if char.isalnum() or char == " " else re.escape(char)


def _either_case(char: str) -> str:
    return f"[{char.lower()}{char.upper()}]" if char.isalpha() else _escape(char)


# The characters an explanation may begin with: a word or a quotation, never a digit, a space,
# a line break or markup (``**Assistant 1:** 7`` would slip past the score-line prefixes).
_FIRST_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\"'("
# Any text at all: what follows an explanation's safe first words.
FREE_TAIL = r"[\s\S]*"


def _explanation_first(forbidden: Sequence[str], label: str) -> str:
    """A regular expression for the texts that begin (after one optional space) with one of
    ``_FIRST_CHARACTERS`` and with none of the ``forbidden`` prefixes (compared
    case-insensitively), where ``label`` (and a space) may come first and the same holds after it.

    Built as the complement of the prefixes' trie, without lookahead (the engines' regular
    expressions have none) and with one way to read each text: the engines' automata may drop
    a way of reading that another shadows. A text that stops inside a prefix ("Sco") does not
    match: the constraint only lets a model end its text after the first words are safe.
    """
    trie: dict[str, Any] = {}
    for word in [*forbidden, label]:
        node = trie
        for char in word.lower():
            node = node.setdefault(char, {})
        node[""] = word is label  # the end of a prefix: forbidden (False) or the label (True)

    def branch(node: dict[str, Any], root: bool, after_label: str | None) -> str:
        """``node``'s texts; ``after_label`` is what may follow the label (None: it is forbidden)."""
        chars = [c for c in node if c]
        taken = {variant for c in chars for variant in (c.lower(), c.upper())}
        if root:
            other = "[" + "".join(_escape(c) for c in _FIRST_CHARACTERS if c not in taken) + "]"
        else:
            other = "[^" + "".join(_escape(c) for c in sorted(taken)) + "]"
        options = [other + FREE_TAIL]
        for char in chars:
            child = node[char]
            if "" not in child:
                options.append(_either_case(char) + branch(child, False, after_label))
            elif child[""] and after_label is not None:  # the label, then the same rule again
                options.append(_either_case(char) + " ?" + after_label)
        # No text ends inside a prefix: outlines-core's index loses the way on from an
        # accepting state into one that is not (seen with "A(bc)?" and the text "Ab"), so
        # every accepting state lies in a free tail, which only leads to accepting states.
        return "(" + "|".join(options) + ")"

    # One space may come first: outside the paper layout the answer continues a lead ("Critic:").
    return " ?" + branch(trie, True, branch(trie, True, None))


@functools.lru_cache(maxsize=32)  # asked for at every assessment request; the same few answers
def assessment_regex(first: str) -> str:
    """The constraint of an assessment: after an optional "Evaluation evidence:" label, its first
    words are not the first score line or a ``Score``/``Scores:`` heading; a line break cannot
    come before them."""
    # The cut (``cut_assessment``) reads the first score line as "<label>:" or "<label> :":
    # the same two are forbidden here, so what the constraint lets through is never cut to
    # nothing. Few prefixes: the engines compile the expression's every state against the
    # whole vocabulary (about 0.03 s a state on two cores). ``first``: the first score's label.
    forbidden = ["score", f"{first}:", f"{first} :"]
    forbidden += [EVIDENCE_LABEL.replace(":", " :"), EVIDENCE_LABEL.replace(":", "\n")]
    return _explanation_first(forbidden, EVIDENCE_LABEL)
