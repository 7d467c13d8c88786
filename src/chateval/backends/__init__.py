"""Generation backends: each turns a list of requests into results (heavy imports stay inside each module)."""
