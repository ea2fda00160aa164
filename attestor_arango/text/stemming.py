"""Words and Porter stems: one tokeniser for the text index, BM25 re-scoring and ingest.

Lower-cased NFKC text split on word characters, each word reduced by the Snowball
Porter stemmer (its C build, PyStemmer, when installed). The embedded text index
and the pipeline's BM25 re-scoring must split text the same way, or a term the
index matched would score nothing.
"""

from __future__ import annotations

import re
import unicodedata

import snowballstemmer

from attestor_arango.memo import memo
from attestor_arango.text.stopwords import STOPWORDS

WORD = re.compile(r"\w+", re.UNICODE)
STEMMER = snowballstemmer.stemmer("porter")
# the stemmer's own cache keeps a two-item list per word, 10k lists the garbage
# collector walks; ``stem`` below memoises without them (see memo.py)
STEMMER.maxCacheSize = 0


@memo(65_536)
def stem(word: str) -> str:
    """The word's stem; the word itself where the stemmer leaves nothing ("s" of "Ana's")."""
    return str(STEMMER.stemWord(word)) or word


def words(text: str) -> list[str]:
    """The text's words, lower-cased, after NFKC normalisation (so "ﬁle" is "file")."""
    return WORD.findall(unicodedata.normalize("NFKC", text).lower())


def stems_and_terms(text: str) -> tuple[list[str], tuple[str, ...]]:
    """Every word's stem (what the text index counts) and the text's scoring terms."""
    found = words(text)
    stems = [stem(w) for w in found]
    return stems, tuple(s for w, s in zip(found, stems, strict=True) if w not in STOPWORDS)


@memo(32_768)
def scoring_terms(text: str) -> tuple[str, ...]:
    """The stems BM25 scoring counts: every word's stem but the stop words'."""
    return stems_and_terms(text)[1]
