"""Plain-text helpers for the rule-based path: sentences, tokens, stems, names.

Deliberately small and deterministic. Stems only build matching keys
("smoking"/"smoke", "cats"/"cat"), and some of those keys are stored (``intent:build``,
``likes:cat``), so they come from the frozen key normaliser (``text/keys.py``), never
from the ranking stemmer; names are never stemmed, so an entity "Paris" stays "Paris".
"""

from __future__ import annotations

import re

from attestor_arango.memo import memo
from attestor_arango.text.keys import key_word
from attestor_arango.text.stopwords import KEY_STOPWORDS


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_WORD = re.compile(r"[A-Za-z0-9$€£%]+(?:['’][A-Za-z]+)?(?:[.,]\d+)?")
_CONTRACTIONS = [
    (r"\b(I)['’]m\b", r"\1 am"),
    (r"\b(\w+)['’]re\b", r"\1 are"),
    (r"\b(\w+)['’]ve\b", r"\1 have"),
    (r"\b(\w+)['’]ll\b", r"\1 will"),
    (r"\b(\w+)['’]d\b", r"\1 would"),
    (r"\b(can)['’]t\b", r"\1not"),
    (r"\b(won)['’]t\b", r"will not"),
    (r"\b(\w+)n['’]t\b", r"\1 not"),
    (r"\b(it|that|he|she|what|there)['’]s\b", r"\1 is"),
]
STOPWORDS = KEY_STOPWORDS  # the ingest's own list: see text/stopwords.py
FILLERS = re.compile(
    r"\b(?:now|currently|actually|these days|nowadays|anymore|any more|instead|as well|too|"
    r"again|already|still|finally|officially|recently|just|though|really)\b",
    re.I,
)
_NOT_NAMES = _wordset(
    """I The A An My Our We It This That These Those Yes No So But And Also Today Yesterday
    Tomorrow Actually Now Their His Her You Your Sure Thanks Thank Hi Hello Hey Well Oh Ok Okay
    Please Since When While If After Before Then There Here What Which Who How Why Last Next
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December Mr Mrs Ms Dr Great Good"""
)


_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e|approx|No)\.$")


def sentences(text: str) -> list[str]:
    """Sentence split on end punctuation followed by a capital, and on line breaks.

    A full stop after a title or common abbreviation ("Dr. Kim") does not end a sentence.
    Only the last piece is searched for the title: a title holds no space and the pieces
    are joined by one, so that is the same test as on the whole sentence so far, and each
    character is read once ("Mr. " repeated 31,000 characters took 20 s searched whole).
    """
    out: list[str] = []
    parts: list[str] = []  # the pieces of the sentence being built
    for piece in _SENTENCE.split(text or ""):
        piece = piece.strip() if piece else ""
        if not piece:
            continue
        if parts and not _ABBREVIATION.search(parts[-1]):
            out.append(" ".join(parts))
            parts = []
        parts.append(piece)
    if parts:
        out.append(" ".join(parts))
    return out


def expand(text: str) -> str:
    """Contractions spelled out, case kept ("I'm" -> "I am", "don't" -> "do not")."""
    out = text.replace("’", "'")
    for pattern, repl in _CONTRACTIONS:
        out = re.sub(pattern, repl, out, flags=re.I)
    return out


def words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


@memo(65_536)  # emptied by an erasure, as every memo (memo.forget_all)
def stem(word: str) -> str:
    """The word's frozen key form ("smoking" -> "smoke"; text/keys.py); numbers pass unchanged."""
    return key_word(word)


def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (stopwords and fillers dropped)."""
    return frozenset(stem(w) for w in words(FILLERS.sub(" ", text)) if w not in STOPWORDS)


def normalise(text: str) -> str:
    """Case, punctuation and spacing folded: for "is this the same sentence?" checks."""
    return " ".join(words(text))


def value_key(value: str) -> str:
    """A value reduced to its meaning-bearing stems, sorted: "the Cats" -> "cat"."""
    return " ".join(sorted(content_stems(value))) or normalise(value)


def names(text: str) -> list[str]:
    """Capitalised word runs that look like proper names, in order, de-duplicated."""
    found: list[str] = []
    tokens = re.findall(r"[A-Za-z][\w'&.-]*|[^\w\s]", text)
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].rstrip(".").endswith("'s"):
            run[-1] = run[-1].rstrip(".")[:-2]
        name = " ".join(t.rstrip(".") for t in run).strip()
        if name and name not in found and name not in _NOT_NAMES:
            found.append(name)
        run.clear()

    for i, tok in enumerate(tokens):
        starts = i == 0 or tokens[i - 1] in {".", "!", "?", ":", '"'}
        if tok[:1].isupper() and tok.rstrip(".") not in _NOT_NAMES and tok.isascii():
            if starts and not run and tok.lower() in STOPWORDS:
                continue
            run.append(tok)
        else:
            flush()
    flush()
    return [n for n in found if len(n) >= 2]
