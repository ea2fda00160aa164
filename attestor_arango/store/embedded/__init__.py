"""The embedded backend: one SQLite file (WAL, FTS5) plus in-memory numpy indexes."""
