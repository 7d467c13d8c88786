"""The shapes of what a run writes, as TypedDicts: the JSON objects themselves, so a record read
back from disk (rescore, report) is the same type as one built in memory. Keys that only some
runs have (pairwise or direct, soft verdicts, opinion probes, reasoning) are optional.

``records``: verdicts.jsonl, transcripts.jsonl and run.json; ``metrics``: metrics.json.
"""
