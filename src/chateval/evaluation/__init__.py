"""Evaluation: metrics and statistics, paired comparison, diagnostics, systems' win rates."""
