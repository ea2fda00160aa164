"""Text machinery shared by the text lane, re-scoring, coverage and ingest: stems, tokens, BM25."""
