"""The families of rows of scripts/simulate_intervals.py: one module each (the calibrated
estimates' three families share one), with the rows' table in ``rows``."""
