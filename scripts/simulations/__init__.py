"""The simulations behind docs/performance.md's coverage tables: ``intervals`` (run by
scripts/simulate_intervals.py) and ``designs`` (scripts/simulate_designs.py)."""
