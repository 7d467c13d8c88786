"""Runs: the run folder, the journal, the runner, rescoring and sweeps."""
