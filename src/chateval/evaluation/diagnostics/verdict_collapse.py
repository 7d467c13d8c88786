"""Copying or collapse: whether referees' equal verdicts say anything, from the verdict records.

A referee's verdict equal to one it saw looks like copying, but when every referee gives
10/10 to everything, every verdict equals every other: equality then says nothing. Two
measures tell the two apart.

**Permutation chance of a copied verdict.** For every final verdict that saw another
referee's (referee B saw A's, ``saw_verdicts_of``; records of earlier releases do not name A,
who is then inferred from the order of the verdicts, see ``_seen``), B's verdict is compared with A's final
verdicts on the *other* debates of the same regime (the same answer order, ``swapped``; direct
runs have one regime): B could not have copied those. A verdict that saw several referees
matches a debate when it equals any of theirs there, as the copy share counts it. The chance is
the mean, over those verdicts, of the share of other debates where it matches (a verdict that
did not parse matches none; debates where none of the seen referees' verdicts parsed are
skipped). That is the expected value of the same test under a random derangement of the
debates (every debate paired with another), computed exactly over all other debates instead of
drawn: no seed, no sampling noise. The copy share minus this chance is the evidence of copying:
a share above it by more than ``COPY_MARGIN`` is called copying; a share within it of a high
chance (above ``COLLAPSE_SHARE``) is collapse, the referees give the same verdict whatever
they read. Both can hold: a panel that gives 10/10 to most items, and whose second referee
repeats the first one's scores on the others too, copies beyond its collapse.

**Scores at the scale's ends, and scores that never vary.** Over final verdicts (parsed; hidden
probes and checks are not final verdicts): the share whose every score sits at its scale's top
(pairwise on 1-10: 10/10), and at its bottom. A referee with at least
``CONSTANT_MIN_VERDICTS`` verdicts that are all the same (pairwise: in the order the answers
were shown, so "always 6 for the first, 5 for the second" is constant) is *constant*; in direct runs, so is a
referee whose score of one dimension never varies (its correlation with the humans on that
dimension is then undefined).
"""

from collections.abc import Collection, Sequence

from chateval.evaluation.diagnostics.parroting import NOT_RECORDED
from chateval.evaluation.settings import Scales
from chateval.schema.diagnostics import ParrotingSummary, ScoreExtremes
from chateval.schema.verdicts import RefereeRow, VerdictRecord

# A copy share must exceed its permutation chance by more than this to be called copying:
# 0.2 is well above the noise of a share over a few dozen verdicts (a binomial standard error
# of at most 0.5/sqrt(n), under 0.09 from n = 32), and small against the gap a copying panel
# shows (the scripted copier of the tests: 100% against ~10%).
COPY_MARGIN = 0.2
# Equal verdicts on unrelated debates more often than this: the panel gives one verdict to all.
COLLAPSE_SHARE = 0.5
# Fewer verdicts than this that happen to agree say little about a referee that cannot vary.
CONSTANT_MIN_VERDICTS = 5

NO_EXPOSED = "no verdict saw another referee's"
NO_OTHER_DEBATE = "no other debate of the same answer order to compare with"

# Each score's scale (low, high), by the name ``scores_of`` gives it: pairwise "A" and "B",
# direct the dimensions.
Scores = tuple[tuple[str, int | float], ...]


def pairwise_scales(low: int, high: int) -> dict[str, tuple[int, int]]:
    """The scales of a pairwise verdict's two scores."""
    return {"A": (low, high), "B": (low, high)}


def scores_of(row: RefereeRow, swapped: bool = False) -> Scores | None:
    """A verdict row's scores (None: it did not parse); pairwise, in the order the answers
    were shown (``swapped``: B first), named "A" for the first shown and "B" for the second,
    so that a referee that always writes the same two lines gives the same scores in both
    answer orders."""
    if "score_a" in row and "score_b" in row:
        first, second = (row["score_b"], row["score_a"]) if swapped else (row["score_a"], row["score_b"])
        return (("A", first), ("B", second))
    scores = row.get("scores")
    return tuple(sorted(scores.items())) if scores is not None else None


def debates_of(records: Sequence[VerdictRecord]) -> list[tuple[bool, list[RefereeRow]]]:
    """Every debate of the records as (its answer order is swapped, its verdict rows)."""
    out: list[tuple[bool, list[RefereeRow]]] = []
    for record in records:
        if "orders" in record:
            out += [(order["swapped"], order["referees"]) for order in record["orders"]]
        else:
            out.append((False, record.get("referees", [])))
    return out


def permutation_chance(
    records: Sequence[VerdictRecord], agents: Collection[str] | None = None
) -> tuple[int | None, float | None, str | None]:
    """(verdicts compared, the permutation chance of a copied verdict, why it is None) over
    the verdicts of ``agents`` (None: every referee) that saw another referee's verdict."""
    debates = debates_of(records)
    finals = [{row["agent"]: scores_of(row) for row in rows} for _, rows in debates]
    exposed = [
        (i, row)
        for i, (_, rows) in enumerate(debates)
        for row in rows
        if (agents is None or row["agent"] in agents) and row.get("parroting", {}).get("saw_verdict")
    ]
    if not exposed:
        return 0, None, NO_EXPOSED
    shares: list[float] = []
    for i, row in exposed:
        seen = _seen(row, debates[i][1])
        if seen is None:
            return None, None, NOT_RECORDED
        own = finals[i].get(row["agent"])
        others = [
            theirs
            for j, (swapped, _) in enumerate(debates)
            if j != i and swapped == debates[i][0]
            if (theirs := [s for a in seen if (s := finals[j].get(a)) is not None])
        ]
        if others:
            shares.append(sum(own is not None and own in theirs for theirs in others) / len(others))
    if not shares:
        return 0, None, NO_OTHER_DEBATE
    return len(shares), sum(shares) / len(shares), None


def _seen(row: RefereeRow, rows: Sequence[RefereeRow]) -> list[str] | None:
    """Whose parsed verdicts the verdict of ``row`` saw, in its debate's ``rows``. Rows of
    earlier releases do not say: only one-by-one talk shows a referee other verdicts, those
    given before its own in the last round, which are the rows before it (verdict rows are in
    the order they were given); the inference must name the referee ``copied_from`` names, or
    it is None (not recorded)."""
    behaviour = row.get("parroting", {})
    if "saw_verdicts_of" in behaviour:
        return behaviour["saw_verdicts_of"]
    before = rows[: next(k for k, other in enumerate(rows) if other is row)]
    inferred = [other["agent"] for other in before if scores_of(other) is not None]
    copied = behaviour.get("copied_from")
    return inferred if inferred and (copied is None or copied in inferred) else None


def with_permutation_chance(
    summary: ParrotingSummary, records: Sequence[VerdictRecord], agents: Collection[str] | None = None
) -> ParrotingSummary:
    """``summary`` with the permutation chance of its copied verdicts."""
    verdicts, chance, reason = permutation_chance(records, agents)
    summary["copy_permutation_verdicts"] = verdicts
    summary["copy_permutation_chance"] = chance
    summary["copy_permutation_chance_reason"] = reason
    return summary


def copying_verdict(parroting: ParrotingSummary) -> str | None:
    """What the verdicts equal to one seen show: ``"copying"`` (the share exceeds its
    permutation chance by more than ``COPY_MARGIN``), ``"copying, beyond collapse"`` (so does
    it, and verdicts on unrelated debates match more than ``COLLAPSE_SHARE`` of the time too),
    ``"collapse, not copying"`` (it does not, and they do), ``"no sign of copying"``; None when
    either share is unknown."""
    share, chance = parroting.get("copy_share"), parroting.get("copy_permutation_chance")
    if share is None or chance is None:
        return None
    collapsed = chance > COLLAPSE_SHARE
    if share - chance > COPY_MARGIN:
        return "copying, beyond collapse" if collapsed else "copying"
    return "collapse, not copying" if collapsed else "no sign of copying"


def _at(scores: Scores, scales: Scales, end: int) -> bool:
    """Every score at its scale's end (0: bottom, 1: top); a score without a scale is not."""
    return all(name in scales and value == scales[name][end] for name, value in scores)


def score_extremes(
    records: Sequence[VerdictRecord], scales: Scales, agents: Collection[str] | None = None
) -> ScoreExtremes:
    """Final verdicts of ``agents`` (None: every referee) at the scales' ends, and the
    referees (and, direct, the dimensions) whose scores never vary."""
    given = [
        (row["agent"], scores)
        for swapped, rows in debates_of(records)
        for row in rows
        if (agents is None or row["agent"] in agents) and (scores := scores_of(row, swapped)) is not None
    ]
    by_referee: dict[str, list[Scores]] = {}
    for agent, scores in given:
        by_referee.setdefault(agent, []).append(scores)
    enough = {agent: found for agent, found in by_referee.items() if len(found) >= CONSTANT_MIN_VERDICTS}
    top = sum(_at(scores, scales, 1) for _, scores in given)
    bottom = sum(_at(scores, scales, 0) for _, scores in given)
    out: ScoreExtremes = {
        "verdicts": len(given),
        "at_top": top,
        "top_share": top / len(given) if given else None,
        "at_bottom": bottom,
        "bottom_share": bottom / len(given) if given else None,
        "constant_referees": [agent for agent, found in enough.items() if len(set(found)) == 1],
    }
    if not any("orders" in r for r in records):  # direct: per dimension
        dimensions: dict[str, list[str]] = {}
        for agent, found in enough.items():
            for name in dict.fromkeys(n for scores in found for n, _ in scores):
                if len({dict(scores).get(name) for scores in found}) == 1:
                    dimensions.setdefault(name, []).append(agent)
        out["constant_dimensions"] = dimensions
    return out
