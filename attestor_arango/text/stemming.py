"""Words and Porter stems: one tokeniser for the text index, BM25 re-scoring and ingest.

Lower-cased NFKC text split on word characters, each word reduced by the Snowball
Porter stemmer (its C build, PyStemmer, when installed). The embedded text index
and the pipeline's BM25 re-scoring must split text the same way, or a term the
index matched would score nothing.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import cache

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
    known = stem.known  # a word stemmed before: a dict lookup (a stem is never empty)
    stems = [known(w) or stem(w) for w in found]
    return stems, tuple(s for w, s in zip(found, stems, strict=True) if w not in STOPWORDS)


@memo(32_768)
def scoring_terms(text: str) -> tuple[str, ...]:
    """The stems BM25 scoring counts: every word's stem but the stop words'."""
    return stems_and_terms(text)[1]


# words whose stems exercise every step of Porter's algorithm, NFKC folding and the
# word pattern: what ``fingerprint`` hashes the output of
_PROBE = (
    "caresses ponies ties cats feed agreed plastered motoring sing conflated troubled "
    "sized hopping falling hissing filing happy sky relational conditional rational "
    "valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli "
    "vietnamization predication operator feudalism decisiveness hopefulness callousness "
    "formaliti sensitiviti sensibiliti triplicate formative formalize electriciti "
    "electrical hopeful goodness revival allowance inference airliner gyroscopic "
    "adjustable defensible irritant replacement adjustment dependent adoption homologou "
    "communism activate angulariti homologous effective bowdlerize probate rate cease "
    "controll roll generous generously Ana's ﬁle naïve 2019 x86_64 don't"
)


@cache
def fingerprint() -> str:
    """What this tokeniser and stemmer produce, as a short hash: a derived index that
    stores stems (the embedded text index's files) keeps it and is rebuilt when it
    differs, so tuning the stemmer, the word pattern or the stop words can never leave
    an index of old stems in use. Stored keys do not depend on it (``text/keys.py``)."""
    digest = hashlib.sha256(WORD.pattern.encode())
    digest.update("\n".join(sorted(STOPWORDS)).encode())
    for word in words(_PROBE):
        digest.update(word.encode() + b"\0" + stem(word).encode() + b"\n")
    return digest.hexdigest()[:16]


class Vocabulary:
    """Numbers the stems of many texts at once: the text index's bulk load.

    ``read(text)`` gives what ``stems_and_terms`` gives (each word's stem, as the
    number of that stem here, and the text's scoring terms), with what is known of
    each distinct word looked up once: rebuilding a million-row index called the
    stem memo and tested the stop words for every word of every row.
    """

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}  # stem -> its number, in order of first sight
        self._words: dict[str, tuple[int, str | None]] = {}  # word -> number, scoring stem

    def _learn(self, word: str) -> tuple[int, str | None]:
        s = stem(word)
        number = self.numbers.setdefault(s, len(self.numbers))
        known = self._words[word] = (number, None if word in STOPWORDS else s)
        return known

    def read(self, text: str) -> tuple[list[int], tuple[str, ...]]:
        """The number of every word's stem, in order, and the text's scoring terms."""
        seen = self._words
        found = [seen[w] if w in seen else self._learn(w) for w in words(text)]
        return [k for k, _ in found], tuple([s for _, s in found if s is not None])
