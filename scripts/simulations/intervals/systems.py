"""The four systems most families plant: log-strengths 0.6, 0.2, -0.2, -0.6, meeting in all
pairs on every prompt, decisions drawn from the Davidson model (``simulations.davidson``).
"""

import itertools

STRENGTHS = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
EQUAL = dict.fromkeys(STRENGTHS, 0.0)
PAIRS = list(itertools.combinations(STRENGTHS, 2))
