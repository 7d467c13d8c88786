"""The run folder's on-disk types, as TypedDicts: the JSON objects themselves, so a record read
back from disk (rescore, report) is the same type as one built in memory. Every one is a
pydantic schema too (``base.record_schema``: a key the type does not know is an error), which
chateval.record validates each file against, after migrating an earlier release's format to
today's.

One module per file or part of one: ``verdicts`` (verdicts.jsonl), ``transcripts``
(transcripts.jsonl), ``items`` (items.jsonl), ``roster`` (roster.json), ``run_info``
(run.json), ``journal`` (journal.jsonl); metrics.json as a whole in ``run_metrics``, its parts
in ``agreement`` (agreement with the human labels, baselines, position), ``paired`` (paired
comparisons, the debate's effect), ``diagnostics`` (the panel's behaviour), ``systems`` and
``calibrated`` (the systems judged); ``judges`` (``chateval compare``). The package imports
nothing of chateval: every stage may use it.
"""
