"""Shared types at the bottom of the flow: the backend protocol, items, transcripts, output records."""
