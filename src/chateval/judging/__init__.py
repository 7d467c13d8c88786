"""Verdicts: their formats and constraints, soft scores, and a panel's aggregation."""
