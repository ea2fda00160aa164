"""Which known entity names a text holds: the name index recall looks names up in.

Matching is on whole words against the names, aliases and keys of a scope's
entities, case-insensitively and in NFKC form, with no stemming: "Paris" stays
"Paris" (a trailing "s" is part of the name, never a plural to strip). A
possessive "Paris's" or "Caroline's" still matches because the apostrophe splits
words. Longer names are matched first and the words they cover are not reused, so
"New York City" does not also name "York".

The index is built once from the entities and then looked up by the runs of words
of the text, so finding names does not cost the number of entities: a tenant with
thousands of entities paid for all of them on every recall when the forms were rebuilt
and sorted each time. Nor does it cost the text's length times the names' lengths: the
runs of each name length are compared by a rolling hash of the words (numpy, two
primes, bases drawn per index) and only the runs whose hash is a name's and none of whose
words a longer name took are read: about twice the text's words at most. A query of
16,000 words against names of 2..128 words read 2 million runs (2.7 s) before.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
# primes below 2**31: a hash times a base or a power of it fits in int64, and the two
# hashes of a run fit in one int64 key; a run is read only when both match a name's
_PRIMES = (2_147_483_647, 2_147_483_629)
_BASES = random.SystemRandom()
# word reads (the text's words times the names' lengths summed) up to which ``find`` reads
# every run: below it numpy's fixed cost per name length is more than the reads (a
# 12-word query against 5,000 names of 1..6 words: ~0.02 ms read, ~0.13 ms hashed)
_DIRECT_READS = 4096


def _hashes(values: Sequence[int], base: int, prime: int) -> list[int]:
    """The polynomial hashes of the prefixes of ``values`` (first 0, one more than it)."""
    out = [0]
    h = 0
    for v in values:
        h = (h * base + v) % prime
        out.append(h)
    return out


def name_words(text: str) -> tuple[str, ...]:
    """The words a name or a query is matched by (NFKC, lower case, ``\\w+`` runs)."""
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


class EntityNames:
    """The surface forms of some entities as runs of words, by length, longest first.

    Built from ``(key, surfaces)`` pairs; a surface of fewer than two letters is left
    out (a one-letter name would match noise). Immutable once built.
    """

    __slots__ = ("_bases", "_by_length", "_span")

    def __init__(self, named: Iterable[tuple[str, Iterable[str]]]) -> None:
        table: dict[int, dict[tuple[str, ...], set[str]]] = {}
        for key, surfaces in named:
            for surface in set(surfaces):
                form = name_words(surface)
                if form and len("".join(form)) >= 2:
                    table.setdefault(len(form), {}).setdefault(form, set()).add(key)
        self._bases = tuple(_BASES.randrange(1 << 16, p - 1) for p in _PRIMES)
        self._by_length: tuple[tuple[int, np.ndarray, dict[tuple[str, ...], tuple[str, ...]]], ...]
        self._by_length = tuple(
            (n, self._keys(list(forms), n), {form: tuple(sorted(keys))
             for form, keys in forms.items()})
            for n, forms in sorted(table.items(), reverse=True)
        )  # fmt: skip
        self._span = sum(table)  # the names' lengths summed: the words a text's word reads

    def _keys(self, forms: list[tuple[str, ...]], n: int) -> np.ndarray:
        """The forms' two hashes as int64 keys, sorted (forms of ``n`` words each)."""
        words = np.array([[hash(w) for w in form] for form in forms], dtype=np.int64)
        first, second = (np.zeros(len(forms), dtype=np.int64) for _ in _PRIMES)
        for column in range(n):
            first = (first * self._bases[0] + words[:, column] % _PRIMES[0]) % _PRIMES[0]
            second = (second * self._bases[1] + words[:, column] % _PRIMES[1]) % _PRIMES[1]
        return np.unique((first << 31) | second)

    def __len__(self) -> int:
        """The number of distinct surface forms held."""
        return sum(len(forms) for _, _, forms in self._by_length)

    def find(self, text: str) -> list[str]:
        """Keys of the entities whose name, alias or key occurs in ``text`` as whole words;
        sorted, de-duplicated.

        The tie rule: forms by length (longest first), then by their words, then by key;
        each takes the places of the text none before it took (so of a form several
        entities share, the first key takes them all). A text long against the names'
        lengths (``_DIRECT_READS``) has only the runs whose hash is a form's and whose
        words are all untaken read, in that order, so the answer is the one a pass over
        every run gives; a short one is read run by run, that pass itself.
        """
        if not self._by_length:  # no names (a scope without entities): nothing to find
            return []
        words = name_words(text)
        if not words:
            return []
        # a short text against short names reads every run; a long one hashes them first
        hashed = len(words) * self._span > _DIRECT_READS
        prefixes = self._prefixes(words) if hashed else []
        used = bytearray(len(words))
        found: set[str] = set()
        for n, keys, forms in self._by_length:
            if n > len(words):
                continue
            starts = self._starts(prefixes, keys, used, n) if hashed else range(len(words) - n + 1)
            places: dict[tuple[str, ...], list[int]] = {}
            for start in starts:
                run = words[start : start + n]
                if run in forms:
                    places.setdefault(run, []).append(start)
            for form in sorted(places):
                key = forms[form][0]
                for start in places[form]:
                    if used.find(1, start, start + n) < 0:
                        found.add(key)
                        used[start : start + n] = b"\x01" * n
        return sorted(found)

    def _prefixes(self, words: tuple[str, ...]) -> list[tuple[np.ndarray, int, int]]:
        """The prefix hashes of the words under each (base, prime), with both."""
        values = [hash(w) for w in words]
        return [
            (np.array(_hashes([v % p for v in values], b, p)), b, p)
            for b, p in zip(self._bases, _PRIMES, strict=True)
        ]

    @staticmethod
    def _starts(
        prefixes: list[tuple[np.ndarray, int, int]], keys: np.ndarray, used: bytearray, n: int
    ) -> list[int]:
        """Where a run of ``n`` words hashes as a form of ``keys`` and no word of it is
        ``used`` yet (by a longer form): the only runs ``find`` need read."""
        first, second = (
            (h[n:] - h[:-n] * pow(b, n, p)) % p for h, b, p in prefixes
        )  # every run of n words, hashed
        runs = (first << 31) | second
        hit = keys[np.minimum(np.searchsorted(keys, runs), len(keys) - 1)] == runs  # sorted
        if not hit.any():
            return []
        taken = np.concatenate(([0], np.cumsum(np.frombuffer(used, dtype=np.uint8))))
        hit &= taken[n:] == taken[:-n]  # no word of the run taken by a longer form
        starts: list[int] = np.flatnonzero(hit).tolist()
        return starts
