"""Debates: the strategies, the panel, building them from a config, and the scheduler."""
