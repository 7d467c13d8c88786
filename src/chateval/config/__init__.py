"""The run config: its sections (``sections``, ``data``), the whole run (``run``), config
files (``files``) and the generated reference docs/config.md (``docs``)."""
