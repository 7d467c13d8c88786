"""The run folder, owned in one place, over its record types (chateval.schema) alone: its files'
names and every read and write (files.py), their record types read through pydantic with errors
naming the file, line and field (reading.py), every older format's migration (migrations.py),
the step journal (journal.py), the lock a writer holds on the folder (lock.py), the items as
debated (items.py), the roster's model entries (roster.py) and the input files' hashes
(inputs.py). A folder read in today's types, its
config.yaml a ``RunConfig``, is chateval.run.finished's."""
