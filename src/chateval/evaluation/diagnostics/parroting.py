"""A run's parroting over all its referees: the shares of echoing, reciting and copying
utterances and verdicts, and their chance baselines, from the per-referee behaviour records
that ``chateval.debate.behaviour`` writes into verdicts.jsonl (the definitions are there)."""

from collections.abc import Callable, Sequence

from chateval.schema.diagnostics import ParrotingSummary
from chateval.schema.verdicts import RefereeBehaviourRecord

NO_BLIND_WORDS = "no two referees spoke before seeing another's words"
NO_BLIND_VERDICTS = "no two referees gave verdicts before seeing another's words"
NOT_RECORDED = "not recorded by this run's release"


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def parroting_summary(behaviours: Sequence[RefereeBehaviourRecord]) -> ParrotingSummary:
    """Echo and copy shares, with the copy shares' chance baselines, over referee-debates
    (``RefereeBehaviour.as_dict`` records; those of earlier releases lack the copied words and
    the baselines, which are then None).

    ``echo_share``: utterances echoing the instructions / utterances. ``words_copy_share``:
    utterances repeating another referee's words / utterances that saw some.
    ``words_copy_chance``: blind utterances sharing words with another referee's blind one /
    blind utterances with one to compare. ``copy_share``: verdicts equal to a verdict their
    speaker saw / verdicts that saw one. ``copy_chance``: blind verdicts equal to another
    referee's blind one / blind verdicts with one to compare. A share is None when there was
    nothing to count; a baseline then says why in ``*_chance_reason``. ``recitation_share``:
    utterances repeating a run of the item's own text / utterances (None, with
    ``recitation_reason``, when a record's release did not count them).
    """
    utterances = sum(b["utterances"] for b in behaviours)
    echoing = sum(b["echoing"] for b in behaviours)
    exposed = [b for b in behaviours if b["saw_verdict"]]
    copied = sum(1 for b in exposed if b["copied_from"])
    recorded = all("saw_words" in b for b in behaviours)

    def total(key: Callable[[RefereeBehaviourRecord], int | None]) -> int | None:
        """A count added up over the behaviours; None when their release did not record it."""
        return sum(key(b) or 0 for b in behaviours) if recorded else None

    saw_words, copied_words = total(lambda b: b.get("saw_words")), total(lambda b: b.get("copied_words"))
    blind_words, blind_words_shared = (
        total(lambda b: b.get("blind_words")),
        total(lambda b: b.get("blind_words_shared")),
    )
    blind_verdicts = total(lambda b: b.get("blind_verdicts"))
    blind_verdicts_equal = total(lambda b: b.get("blind_verdicts_equal"))
    words_chance = _share_of(blind_words_shared, blind_words)
    copy_chance = _share_of(blind_verdicts_equal, blind_verdicts)
    recited = all("reciting" in b for b in behaviours)
    reciting = sum(b.get("reciting", 0) for b in behaviours) if recited else None
    return {
        "utterances": utterances,
        "echoing": echoing,
        "echo_share": _share(echoing, utterances),
        "verdicts_that_saw_one": len(exposed),
        "copied": copied,
        "copy_share": _share(copied, len(exposed)),
        "utterances_that_saw_words": saw_words,
        "copied_words": copied_words,
        "words_copy_share": _share_of(copied_words, saw_words),
        "blind_words": blind_words,
        "blind_words_shared": blind_words_shared,
        "words_copy_chance": words_chance,
        "words_copy_chance_reason": _chance_reason(recorded, words_chance, NO_BLIND_WORDS),
        "blind_verdicts": blind_verdicts,
        "blind_verdicts_equal": blind_verdicts_equal,
        "copy_chance": copy_chance,
        "copy_chance_reason": _chance_reason(recorded, copy_chance, NO_BLIND_VERDICTS),
        "reciting": reciting,
        "recitation_share": _share_of(reciting, utterances),
        "recitation_reason": None if recited else NOT_RECORDED,
    }


def _share_of(part: int | None, whole: int | None) -> float | None:
    return None if part is None or whole is None else _share(part, whole)


def _chance_reason(recorded: bool, chance: float | None, none_to_compare: str) -> str | None:
    """Why a chance baseline is None: not recorded, or nothing to compare; None when it is not."""
    if not recorded:
        return NOT_RECORDED
    return none_to_compare if chance is None else None
