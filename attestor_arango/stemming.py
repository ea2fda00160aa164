"""Words and Porter stems: one tokeniser for the text index, BM25 re-scoring and ingest.

Lower-cased NFKC text split on word characters, each word reduced by the Snowball
Porter stemmer (its C build, PyStemmer, when installed). The embedded text index
and the pipeline's BM25 re-scoring must split text the same way, or a term the
index matched would score nothing.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

WORD = re.compile(r"\w+", re.UNICODE)
STEMMER = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The word's stem; the word itself where the stemmer leaves nothing ("s" of "Ana's")."""
    return str(STEMMER.stemWord(word)) or word


def words(text: str) -> list[str]:
    """The text's words, lower-cased, after NFKC normalisation (so "ﬁle" is "file")."""
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())
