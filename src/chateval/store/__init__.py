"""The judgment store: finished debates kept across runs, so that a run judges only what no
earlier run judged. One SQLite file per user (or per ``--cache DIR``) in WAL mode, owner-only,
shared safely by concurrent runs (``judgments.py`` over ``database.py``), where it lives by
default (``location.py``), and the content digests of model folders' files, cached by their
stat so that a folder of tens of GiB is read once (``fingerprints.py``). Keys, panel
fingerprints and payloads are opaque here: what decides a debate's key is the run's
(``chateval.run``); this package knows no config, debate or record."""
