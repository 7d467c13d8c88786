"""Adaptive comparisons: which (prompt, pair of systems) the panel debates next, chosen from the
verdicts so far, so that debates go where the ranking is least certain.

The candidates are every comparison of the ``all_pairs`` design (each prompt x each pair of
systems). The design spends a budget of comparisons in waves:

- waves 0 and 1 are seeded and balanced: each a random cycle through the systems (every system
  in two comparisons), each comparison on the prompt used least so far;
- wave k + 2 is chosen once waves 0..k have all finished (and wave k + 1 has been chosen), from
  their verdicts alone. So the engines always have a wave to work on while the next is chosen,
  and the choices do not depend on which debate happened to finish first: a streaming run, a
  run with step barriers, a resumed run and the simulation all choose the same waves.

Choosing a wave. The leaderboard's model is fitted to the finished comparisons
(``leaderboard.fit_board``). Half of the wave (``EXPLORE``; a quarter, ``EXPLORE_TOP_1``, with
``top_k`` 1 and budget enough: "Why explore" below) goes to the pairs compared least so far;
the rest to where the ranking is least certain: the pairs whose comparison most lowers the
expected number of pairs in the wrong order (``adaptive_targeting``), among all pairs of systems
(``top_k`` set: the pairs across the boundary between the best k and the rest). Each pick goes
to the prompt of that pair used least so far (ties broken by a seeded order), so prompts stay
balanced and the prompt-clustered intervals keep their degrees of freedom.

Why explore: a design that only follows the fit compares mostly neighbours, and a neighbour
pair whose gap came out too wide by chance looks settled and is left alone while one that came
out too narrow is corrected; the gaps then add up along the chain. In
``scripts/simulate_designs.py`` (16 systems, 480 comparisons) the fitted ratings came out 1.7
times as spread as the planted ones and their 95% intervals held the planted values 74% of the
time; with half of every wave exploring, 1.1 times (what fixed designs of that size show too) and
95%, at the same Kendall's tau. Asked only for the best (``top_k`` 1) with at least
``TOP_1_PER_PAIR`` comparisons per pair of systems, a quarter explores: the targets are then a
chain of one link (the fitted best and each other system), the intervals still held, and the
best was found as often as all pairs find it with twice the budget (docs/performance.md, on
runs held out from those the quarter was chosen on); with fewer, a quarter left the intervals
under 94%.

Stopping. The design stops when the budget is spent, when every candidate is taken, or when the
ranking is *resolved*: every tested pair's interval of the rating difference (the leaderboard's
own, ``leaderboard.rating_difference``) excludes 0 (every adjacent pair told apart; with
``top_k``, every system of the best k told apart from every other). It looks at three
checkpoints (``CHECKPOINTS``: the first wave boundary at which a quarter, half and three quarters
of the budget have finished), not after every wave: every look spends a share of the 5% error,
and a look after each of 30 waves left each so little that the stop hardly ever fired. The
pairs a false claim must involve share each look's share (Bonferroni over looks and pairs): for
the whole order every one of the K (K - 1) / 2 pairs (which pairs are adjacent depends on the
fitted order); for ``top_k`` the k (K - k) pairs across the *true* best k, since a false claim
that S is the best k puts some system of S below (or level with) one outside it, and any such
pair crosses the true boundary (with ties there, any fixed choice of the true best k).

What may be watched. Every "resolved" an adaptive run shows belongs to one split of 5%
(``RESOLVED_ALPHA``) over ``LOOKS`` looks: the stop's three and the final leaderboard's (its
``resolved`` pairs, at ``LOOK_ALPHA`` = 0.05 / 4 over all K (K - 1) / 2 pairs, 98.75% jointly:
the run's statistics settings pass it to ``leaderboard``). Between the looks nothing is
claimed: after each wave a run shows its journal's waves and, once it has stopped, the stop; no
plain 95% list is shown. So everything a user reads during the run and after it, at every wave
and on the final board, is a false claim (a pair told apart that the truth has equal or the
other way round) at most 5% of the time. ``scripts/simulate_designs.py`` counts it on planted
ties and on systems all equal, where every claim is false (its stops table, 1,000 runs a row):
at most 0.8% of runs showed a false claim, where a plain 95% board refit after every wave
would have shown one in up to 12.2% (8 equal systems, budget 480). A confidence sequence valid
after every wave was the other way; the split keeps the leaderboard's own prompt-clustered
intervals, which the usual confidence sequences (independent observations) do not give, and
spends a quarter of the 5% at each look. The price is power: with close systems the design
usually spends its budget, and the final board resolves fewer pairs than a planned design's
board of the same comparisons (98.75% jointly instead of 95%).
"""

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from chateval.evaluation.settings import RESOLVED_ALPHA
from chateval.evaluation.systems.adaptive_targeting import targeted_pairs
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.leaderboard import FittedBoard, fit_board

BUDGET_SPENT = "budget spent"
ALL_TAKEN = "every candidate compared"
RESOLVED = "resolved"  # every adjacent pair's difference interval excludes 0
TOP_K_RESOLVED = "top-k resolved"  # the best k told apart from the rest
# The share of each chosen wave spent on the pairs compared least (see the module doc): half,
# and a quarter when only the best system matters (``top_k`` 1) and the budget buys at least
# TOP_1_PER_PAIR comparisons per pair of systems.
EXPLORE = 0.5
EXPLORE_TOP_1 = 0.25
TOP_1_PER_PAIR = 4
# The shares of the budget finished at which the stop looks (see the module doc).
CHECKPOINTS = (0.25, 0.5, 0.75)
# The looks that share RESOLVED_ALPHA: the stop's, one per checkpoint, and the final board's.
LOOKS = len(CHECKPOINTS) + 1
LOOK_ALPHA = RESOLVED_ALPHA / LOOKS


@dataclass(frozen=True)
class Candidate:
    """One comparison the design may choose: an item of the all_pairs design."""

    key: str  # the item's id
    prompt: str
    system_a: str
    system_b: str


@dataclass(frozen=True)
class AdaptiveSettings:
    """How many comparisons in all (the seed waves included), how many per wave, and what
    counts as resolved (``top_k`` None: the whole order)."""

    budget: int
    wave: int
    top_k: int | None = None
    seed: int = 0


@dataclass
class AdaptiveDesign:
    """The state of one adaptive run: the waves chosen, the verdicts recorded, why it stopped.

    Use: ``start()`` (the two seed waves), then ``record`` each finished comparison and call
    ``ready()``, which returns the waves that can now be chosen (possibly none). ``restore``
    puts back the waves a killed run had chosen (from its journal) before its verdicts are
    recorded again.
    """

    candidates: Sequence[Candidate]
    systems: Sequence[str]
    settings: AdaptiveSettings
    waves: list[list[str]] = field(default_factory=list)
    stop: str | None = None
    # The fitted order (best first) at the look that stopped resolved: the claim the stop made
    # (None otherwise, and after a resume, which replays the journal's stop).
    stop_order: list[str] | None = None
    _results: dict[str, Comparison | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.settings.budget < 1 or self.settings.wave < 1:
            raise ValueError("an adaptive design needs a budget and a wave size of at least 1")
        if self.settings.top_k is not None and not 1 <= self.settings.top_k < len(self.systems):
            raise ValueError(f"top_k must lie in 1..{len(self.systems) - 1}")
        self._by_key = {c.key: c for c in self.candidates}
        self._order = {
            p: i for i, p in enumerate(_seeded_order({c.prompt for c in self.candidates}, self.settings.seed))
        }

    @property
    def chosen(self) -> list[str]:
        """Every key chosen so far, wave by wave."""
        return [key for wave in self.waves for key in wave]

    def start(self) -> list[list[str]]:
        """The two seeded waves (nothing to choose from yet)."""
        if self.waves:
            raise RuntimeError("the design has started already")
        rng = np.random.default_rng(self.settings.seed)
        for _ in range(2):
            self.waves.append(self._cycle(rng))
        return list(self.waves)

    def restore(self, waves: Sequence[Sequence[str]], stop: str | None) -> None:
        """Take the waves (and the stop) a killed run had journalled."""
        unknown = [k for wave in waves for k in wave if k not in self._by_key]
        if unknown:
            raise ValueError(f"journalled comparisons {unknown[:3]} are not candidates of this run")
        self.waves = [list(w) for w in waves]
        self.stop = stop

    def record(self, key: str, comparison: Comparison | None) -> None:
        """A chosen comparison finished (None: the panel could not decide it)."""
        self._results[key] = comparison

    def finished(self, wave: int) -> bool:
        """Whether every comparison of wave ``wave`` has been recorded."""
        return all(key in self._results for key in self.waves[wave])

    def ready(self) -> list[list[str]]:
        """Choose every wave whose inputs are complete (wave k + 2 needs waves 0..k finished);
        the new waves, in order (none once the design has stopped)."""
        new = []
        while self.stop is None and self.waves and all(self.finished(k) for k in range(len(self.waves) - 1)):
            wave = self._choose(len(self.waves) - 2)
            if wave:
                self.waves.append(wave)
                new.append(wave)
        return new

    def candidate(self, key: str) -> Candidate:
        """The candidate of ``key``."""
        return self._by_key[key]

    def _free(self) -> dict[tuple[str, str], list[Candidate]]:
        """Candidates not yet chosen, by (unordered) pair of systems."""
        taken = set(self.chosen)
        out: dict[tuple[str, str], list[Candidate]] = {}
        for c in self.candidates:
            if c.key not in taken:
                out.setdefault(_pair(c.system_a, c.system_b), []).append(c)
        return out

    def _room(self) -> int:
        return min(self.settings.wave, self.settings.budget - len(self.chosen))

    def _prompt_use(self) -> Counter[str]:
        return Counter(self._by_key[k].prompt for k in self.chosen)

    def _take(
        self, pair: tuple[str, str], free: dict[tuple[str, str], list[Candidate]], use: Counter[str]
    ) -> str:
        """The pair's free candidate on the prompt used least (seeded order among equals)."""
        options = free[pair]
        best = min(options, key=lambda c: (use[c.prompt], self._order[c.prompt]))
        options.remove(best)
        if not options:
            del free[pair]
        use[best.prompt] += 1
        return best.key

    def _cycle(self, rng: np.random.Generator) -> list[str]:
        """A seeded random cycle through the systems (one pair for two systems)."""
        free, use = self._free(), self._prompt_use()
        order = [self.systems[i] for i in rng.permutation(len(self.systems))]
        edges = [(order[i], order[(i + 1) % len(order)]) for i in range(len(order) if len(order) > 2 else 1)]
        wave: list[str] = []
        for a, b in edges:
            if len(wave) >= self._room():
                break
            if _pair(a, b) in free:
                wave.append(self._take(_pair(a, b), free, use))
        return wave

    def _balanced(
        self, free: dict[tuple[str, str], list[Candidate]], use: Counter[str], limit: int | None = None
    ) -> list[str]:
        """Up to ``limit`` (default: the room left in the wave) comparisons of the pairs compared
        least so far, among equals in a seeded order: the exploring half of a wave, and the
        whole wave while the finished comparisons do not yet connect every system (undecided
        ones left a gap)."""
        wave: list[str] = []
        pairs = Counter(_pair(self._by_key[k].system_a, self._by_key[k].system_b) for k in self.chosen)
        seed = self.settings.seed
        while free and len(wave) < (self._room() if limit is None else limit):
            pair = min(free, key=lambda p: (pairs[p], _seeded_rank(seed, "\x1f".join(p))))
            pairs[pair] += 1
            wave.append(self._take(pair, free, use))
        return wave

    def _choose(self, last_finished: int) -> list[str]:
        """Wave ``last_finished + 2`` from the verdicts of waves 0..last_finished; [] and a stop
        reason when nothing more is to be chosen."""
        free = self._free()
        if not free:  # before the budget: a budget of every candidate ends with all of them taken
            self.stop = ALL_TAKEN
            return []
        if self._room() <= 0:
            self.stop = BUDGET_SPENT
            return []
        seen = [self._results[k] for wave in self.waves[: last_finished + 1] for k in wave]
        comparisons = [c for c in seen if c is not None]
        try:
            board = fit_board(comparisons, self.systems)
        except ValueError:  # not yet connected (undecided comparisons): balance instead
            return self._balanced(free, self._prompt_use())
        theta = board.log_strengths()
        order = sorted(range(len(theta)), key=lambda i: (-theta[i], i))
        targets = self._targets(order)
        if self._looks(last_finished) and self._resolved(board, order, targets):
            self.stop = TOP_K_RESOLVED if self.settings.top_k is not None else RESOLVED
            self.stop_order = [board.arrays.systems[i] for i in order]
            return []
        # One count of prompt use for the whole wave, so its two parts balance together.
        use = self._prompt_use()
        explore = self._balanced(free, use, limit=int(self.explore_share() * self._room()))
        left = {pair: len(options) for pair, options in free.items()}
        picks = targeted_pairs(board, targets, left, self._room() - len(explore))
        return explore + [self._take(pair, free, use) for pair in picks]

    def explore_share(self) -> float:
        """The share of each chosen wave that explores (the module doc)."""
        systems = len(self.systems)
        focused = self.settings.budget >= TOP_1_PER_PAIR * systems * (systems - 1) // 2
        return EXPLORE_TOP_1 if self.settings.top_k == 1 and focused else EXPLORE

    def _targets(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """The pairs whose order the ranking is about (indices into ``board.arrays.systems``,
        better first, ``order`` the fitted ranking): every pair (``top_k``: every pair across the
        boundary)."""
        k = self.settings.top_k
        if k is None:
            return [(order[a], order[b]) for a in range(len(order)) for b in range(a + 1, len(order))]
        return [(i, j) for i in order[:k] for j in order[k:]]

    def planned_looks(self) -> int:
        """At most how many times the design tests whether it is resolved: once per checkpoint
        (the final board's look is the ``LOOKS``-th)."""
        return len(CHECKPOINTS)

    def _passed(self, waves: int) -> int:
        """How many checkpoints the first ``waves`` waves' comparisons reach."""
        spent = sum(len(wave) for wave in self.waves[:waves])
        return sum(spent >= share * self.settings.budget for share in CHECKPOINTS)

    def _looks(self, last_finished: int) -> bool:
        """Whether the stop looks once waves 0..``last_finished`` have finished: they reach a
        checkpoint the waves before them did not (one look however many they pass)."""
        return self._passed(last_finished + 1) > self._passed(last_finished)

    def _resolved(self, board: FittedBoard, order: Sequence[int], targets: Sequence[tuple[int, int]]) -> bool:
        """Every adjacent pair of the order told apart (``top_k``: every target), each look at
        its share of the error (``LOOK_ALPHA``), over the pairs a false claim must involve (the
        module doc)."""
        systems, k = len(order), self.settings.top_k
        if k is None:
            targets = list(zip(order, order[1:], strict=False))
            pairs = systems * (systems - 1) // 2
        else:
            pairs = k * (systems - k)
        return all(board.told_apart(i, j, pairs, LOOK_ALPHA) for i, j in targets)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _seeded_rank(seed: int, name: str) -> str:
    """A name's place in an order fixed by the seed: the tie-break among equals."""
    return hashlib.sha1(f"{seed}:{name}".encode()).hexdigest()


def _seeded_order(prompts: set[str], seed: int) -> list[str]:
    """The prompts in an order fixed by the seed (the tie-break among equally used prompts)."""
    return sorted(prompts, key=lambda p: _seeded_rank(seed, p))


Judge = Callable[[Sequence[Candidate]], list[Comparison | None]]
"""Decides a wave's comparisons (None: undecided), in order: a simulated or scripted panel."""


def simulate(
    design: AdaptiveDesign, judge: Judge, after_wave: Callable[[AdaptiveDesign], None] | None = None
) -> list[Comparison | None]:
    """Run ``design`` to its stop with ``judge`` deciding each wave, one wave at a time in
    order (the simulation and the tests); every decision, in the order made. ``after_wave``
    sees the design after each wave, as a user watching the run would."""
    design.start()
    results: list[Comparison | None] = []
    done = 0
    while done < len(design.waves):
        wave = design.waves[done]
        for key, comparison in zip(wave, judge([design.candidate(k) for k in wave]), strict=True):
            design.record(key, comparison)
            results.append(comparison)
        done += 1
        design.ready()
        if after_wave is not None:
            after_wave(design)
    return results
