"""The run config: its sections (``sections``, ``data``), the whole run (``run``), config
files (``files``) and the generated references docs/config.md and docs/import_config.md (``docs``)."""
