"""Engines: the model registry, the backend factory (a run's ``Engines``), memory estimates,
placement, the model pool, context fitting."""
