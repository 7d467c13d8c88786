"""Engines: the model registry, the backend factory, placement, the model pool, context fitting."""
