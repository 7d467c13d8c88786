"""The run folder, owned in one place: its files' names (files.py), their record types read
through pydantic with errors naming the file, line and field (reading.py), every older format's
migration (migrations.py), and what a finished folder holds (finished.py): the items as debated
(items.py), the panel and its models (roster.py) and the input files' hashes (inputs.py)."""
