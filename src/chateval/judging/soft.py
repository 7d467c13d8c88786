"""Soft verdicts: each constrained score read as a probability distribution over its scale.

The backend reports, at every generated position of a scores request, the probability of each
vocabulary token whose text is a run of ASCII digits that can occur in a score (``score_pieces``),
taken after the constraint's mask, so the allowed tokens' probabilities sum to 1. A score's
distribution is read at the position of the token that begins it (found from the generated
text, ``read_score``):

- a token that spells a whole value and begins no longer one (``7`` on a 1..10 scale) gives
  that value its probability, exactly;
- a token that begins a longer value (``1`` begins both 1 and 10 when digits are single tokens)
  is resolved at the next position when the decoder took that token: there the continuation
  digits (``0``) go on to the longer values and the rest of the probability (the mask allows
  only continuations and what ends the score) stays with the shorter value. Exact.
- when the decoder took another token, the next position was never computed, so the split of
  that shared first token is unknown without a second engine call. Its probability goes to the
  value it can begin that is nearest the decoded score (split evenly on a tie); a judge's
  distribution is concentrated around its decoded score, so on a 1..10 scale a referee that wrote
  8 has its ``1``-mass counted as 10, one that wrote 3 as 1. This mass is reported as
  ``ambiguous``: how much of a distribution rests on the approximation.

Probability that cannot be placed on a value (a score that does not begin at a token boundary,
a piece outside the scale) is ``unmapped``; ``expected`` and ``entropy`` use the mapped part.
``check_vocabulary`` refuses, before a run, a tokenizer whose tokens could join a score's digits
with the text around it (``" 7"``, ``"7\\n"``): its scores could not be read reliably.
"""

import re
from collections.abc import Iterable, Mapping, Sequence

from chateval.core.distributions import ScoreDistribution
from chateval.errors import ConfigError

# A token that joins a score digit with the text a score line puts around it (": 7\n").
_JOINED = re.compile(r"[ :\t][0-9]|[0-9][\n\r]")


def score_pieces(scales: Iterable[Sequence[int]]) -> tuple[str, ...]:
    """Every digit string a token can spell inside a value of ``scales`` (all substrings)."""
    pieces: set[str] = set()
    for values in scales:
        for value in values:
            text = str(value)
            pieces.update(text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1))
    return tuple(sorted(pieces, key=lambda p: (len(p), p)))


def check_vocabulary(model: str, token_texts: Iterable[str], scales: Iterable[Sequence[int]]) -> None:
    """Refuse a tokenizer whose scores cannot be read (see the module docstring)."""
    pieces = set(score_pieces(scales))
    spellable: set[str] = set()
    for text in token_texts:
        if _JOINED.search(text):
            raise ConfigError(
                f"model {model!r}: its vocabulary has a token {text!r} that joins a score's digits "
                "with the text around them, so its score probabilities cannot be read; set "
                "verdict.soft: false for this model's runs"
            )
        if text in pieces:
            spellable.add(text)
    for values in scales:
        for value in values:
            if not _spellable(str(value), spellable):
                raise ConfigError(
                    f"model {model!r}: no digit tokens spell the score {value}; set verdict.soft: false"
                )


def _spellable(text: str, pieces: set[str]) -> bool:
    """Whether ``text`` splits into tokens of ``pieces``."""
    reachable = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        reachable[end] = any(reachable[start] and text[start:end] in pieces for start in range(end))
    return reachable[-1]


UNREADABLE = ScoreDistribution({}, unmapped=1.0)


def read_score(
    text: str,
    span: tuple[int, int],
    token_ends: Sequence[int],
    probabilities: Sequence[Mapping[str, float]],
    values: Sequence[int],
) -> ScoreDistribution:
    """The distribution of the score at ``span`` of the generated ``text``.

    ``token_ends[k]`` is where generated token k ends in ``text``; ``probabilities[k]`` maps
    digit strings to their probability at position k (summed over tokens with that text).
    """
    start, end = span
    starts = [0, *token_ends[:-1]]
    # The token that begins the score (not an empty one before it, such as a byte-fallback piece).
    first = next((k for k, s in enumerate(starts) if s == start and token_ends[k] > start), None)
    if first is None:
        return UNREADABLE  # the score shares a token with the text before it
    decoded = int(text[start:end])
    scale = [str(v) for v in values]
    mass: dict[int, float] = {}
    unmapped = 0.0
    ambiguous = 0.0

    def spread(position: int, prefix: str, weight: float) -> None:
        nonlocal unmapped, ambiguous
        taken = text[starts[position] : token_ends[position]] if position < len(token_ends) else ""
        for piece, p in probabilities[position].items():
            written = prefix + piece
            if p <= 0:
                continue
            covered = [v for v in scale if v.startswith(written)]
            if not covered:
                # At a continuation position, what does not continue ends the value (the rest).
                if not prefix:
                    unmapped += weight * p
            elif covered == [written]:
                mass[int(written)] = mass.get(int(written), 0.0) + weight * p
            elif piece == taken and position + 1 < len(token_ends):
                follow = probabilities[position + 1]
                continued = sum(q for s, q in follow.items() if any(v.startswith(written + s) for v in scale))
                spread(position + 1, written, weight * p)
                rest = weight * p * max(0.0, 1.0 - continued)
                if written in scale:
                    mass[int(written)] = mass.get(int(written), 0.0) + rest
                else:
                    unmapped += rest
            else:
                ambiguous += weight * p
                nearest = [int(v) for v in covered]
                gap = min(abs(v - decoded) for v in nearest)
                closest = [v for v in nearest if abs(v - decoded) == gap]
                for v in closest:
                    mass[v] = mass.get(v, 0.0) + weight * p / len(closest)

    spread(first, "", 1.0)
    return ScoreDistribution(mass, unmapped, ambiguous)
