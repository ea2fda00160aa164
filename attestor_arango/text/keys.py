"""The frozen word normaliser for keys stored in the database (version 1).

Ingest stores keys built from words: supersession attributes such as
``intent:build``, ``does:smoke``, ``num:weigh:kilogram`` or ``likes:cat``, matched
against later facts months after they were written. If such a key came from the
ranking stemmer (``text/stemming.py``), tuning that stemmer would silently change
what new facts are keyed as, and a new "I plan to ..." would no longer supersede
the stored one. So stored keys come from this module, which the project owns and
which imports nothing but the standard library.

**Frozen.** ``key_word`` must return the same string for the same word forever.
A change of its output, for any word, is a new version: add ``key_word_v2`` beside
this one, keep v1 for rows already stored, and write a migration note (which rows
are re-keyed, by what command) in docs/architecture.md. ``tests/test_text_keys.py``
pins v1's output on a fixed word list and fails when this module starts importing
a stemmer.

Version 1 is M. F. Porter's 1980 suffix-stripping algorithm ("An algorithm for
suffix stripping", Program 14(3)), in the reading of the Snowball project's
``porter`` stemmer, written out here: it is exactly the stem ingest keys were built
with before this module existed (Snowball ``porter`` via PyStemmer), so keys of
rows already stored are produced unchanged. Words are lower-cased first; a word
that is not all letters (a number, "3rd", "$5") is kept as it is.
"""

from __future__ import annotations

VERSION = 1

_VOWELS = frozenset("aeiouy")  # "y" is a vowel unless marked "Y" below
_NOT_SHORT_END = frozenset("aeiouywxY")  # a short syllable ends on another consonant

# longest suffix first within each table: only the longest match counts
_STEP_1A = (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", ""))
_STEP_2 = (
    ("ational", "ate"), ("tional", "tion"), ("ization", "ize"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("biliti", "ble"), ("entli", "ent"),
    ("ousli", "ous"), ("aliti", "al"), ("iviti", "ive"), ("alism", "al"), ("ation", "ate"),
    ("anci", "ance"), ("enci", "ence"), ("abli", "able"), ("alli", "al"), ("izer", "ize"),
    ("ator", "ate"), ("eli", "e"),
)  # fmt: skip
_STEP_3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ness", ""), ("ful", ""),
)  # fmt: skip
_STEP_4 = (
    "ement", "ance", "ence", "able", "ible", "ment", "ate", "ive", "ize", "iti", "ism", "ion",
    "ous", "ant", "ent", "ic", "al", "er", "ou",
)  # fmt: skip
_DOUBLES = frozenset(("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"))


def _longest(word: str, suffixes: tuple[str, ...]) -> str | None:
    best: str | None = None
    for suffix in suffixes:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best)):
            best = suffix
    return best


def _mark_y(word: str) -> str:
    """A "y" that starts the word or follows a vowel acts as a consonant: mark it "Y"."""
    chars = list(word)
    for i, ch in enumerate(chars):
        if ch == "y" and (i == 0 or chars[i - 1] in _VOWELS):
            chars[i] = "Y"
    return "".join(chars)


def _region_after(word: str, start: int) -> int:
    """Where the region begins: after the first non-vowel that follows a vowel."""
    i = start
    while i < len(word) and word[i] not in _VOWELS:
        i += 1
    while i < len(word) and word[i] in _VOWELS:
        i += 1
    return i + 1 if i < len(word) else len(word)


def _short_end(word: str) -> bool:
    """The word ends consonant-vowel-consonant, the last not w, x or Y ("hop", not "how")."""
    return (
        len(word) >= 3
        and word[-1] not in _NOT_SHORT_END
        and word[-2] in _VOWELS
        and word[-3] not in _VOWELS
    )


def _has_vowel(part: str) -> bool:
    return any(ch in _VOWELS for ch in part)


def _step_1(word: str, r1: int) -> str:
    suffix = _longest(word, tuple(s for s, _ in _STEP_1A))
    if suffix is not None:
        word = word[: -len(suffix)] + dict(_STEP_1A)[suffix]
    if word.endswith("eed"):
        if len(word) - 3 >= r1:
            word = word[:-1]
    else:
        suffix = _longest(word, ("ed", "ing"))
        if suffix is not None and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                word += "e"
            elif word[-2:] in _DOUBLES:
                word = word[:-1]
            elif len(word) == r1 and _short_end(word):
                word += "e"
    if word[-1:] in ("y", "Y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _replace(word: str, table: tuple[tuple[str, str], ...], r1: int) -> str:
    suffix = _longest(word, tuple(s for s, _ in table))
    if suffix is not None and len(word) - len(suffix) >= r1:
        word = word[: -len(suffix)] + dict(table)[suffix]
    return word


def _step_4(word: str, r2: int) -> str:
    suffix = _longest(word, _STEP_4)
    if suffix is None or len(word) - len(suffix) < r2:
        return word
    stem = word[: -len(suffix)]
    if suffix == "ion" and not stem.endswith(("s", "t")):
        return word
    return stem


def _step_5(word: str, r1: int, r2: int) -> str:
    if word.endswith("e"):
        at = len(word) - 1
        if at >= r2 or (at >= r1 and not _short_end(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and len(word) - 1 >= r2:
        word = word[:-1]
    return word


def key_word(word: str) -> str:
    """Version 1 of a word's stored-key form: "Smoking" -> "smoke", "plans" -> "plan".

    Lower-cased; a word that is not all letters is returned lower-cased and unchanged.
    Frozen: see the module docstring before changing anything here. Not memoised here
    (this module imports only the standard library): ``ingest/text.py`` memoises it.
    """
    w = word.lower()
    if not w.isalpha():
        return w
    marked = _mark_y(w)
    r1 = _region_after(marked, 0)
    r2 = _region_after(marked, r1)
    out = _step_1(marked, r1)
    out = _replace(out, _STEP_2, r1)
    out = _replace(out, _STEP_3, r1)
    out = _step_4(out, r2)
    out = _step_5(out, r1, r2)
    return out.replace("Y", "y")
