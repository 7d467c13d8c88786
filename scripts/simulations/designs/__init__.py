"""The pieces of scripts/simulate_designs.py: the planted systems, the adaptive design on a
simulated panel, the claims a run makes, one run of a design, and the two tables' rows."""
