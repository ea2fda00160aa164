"""The FTS5 MATCH expression of a free-text query.

Words are ORed (recall wants any overlap; BM25 ranks) and quoted, so nothing a user
types is read as an FTS5 operator. Very common words are dropped on the query side
only: OR-matching them scans most of the index for no ranking signal.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
# Query-side only: words so common that OR-matching them scans most of the index.
# Deliberately narrower than retrieval.text.STOPWORDS (which BM25 re-scoring drops):
# choosing candidates with that longer list measured worse on LoCoMo (turn R@10
# 0.892 -> 0.887, session R@5 0.939 -> 0.935), since words like "not" or "before"
# still pick useful candidates even when they do not score.
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression that ORs the query's words (quoted, so no operators)."""
    words: list[str] = []
    for word in _WORD.findall(query.lower()):
        if word not in _STOPWORDS and word not in words:
            words.append(word)
    if not words:
        words = list(dict.fromkeys(_WORD.findall(query.lower())))
    return " OR ".join(f'"{w}"' for w in words) if words else None
