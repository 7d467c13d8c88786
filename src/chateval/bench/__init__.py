"""``chateval bench``: benchmark modes and the request cost model."""
