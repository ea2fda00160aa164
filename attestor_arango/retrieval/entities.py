"""Deterministic entity recognition: which known entities does the query name?

Matching is on whole words against the names and aliases the scope already
knows, case-insensitively, with no stemming: "Paris" stays "Paris" (a trailing
"s" is part of the name, never a plural to strip). A possessive "Paris's" or
"Caroline's" still matches because the apostrophe splits words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from attestor_arango.models import Entity

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


def recognize(query: str, entities: Iterable[Entity]) -> list[str]:
    """Keys of the entities whose name, alias or key occurs in ``query`` as whole words.

    Sorted, de-duplicated. Longer surface forms are matched first and the words
    they cover are not reused, so "New York City" does not also name "York".
    """
    q = words(query)
    if not q:
        return []
    forms: list[tuple[tuple[str, ...], str]] = []
    for ent in entities:
        for surface in {ent.name, ent.key, *ent.aliases}:
            w = words(surface)
            if w and len("".join(w)) >= 2:  # a one-letter name would match noise
                forms.append((w, ent.key))
    forms.sort(key=lambda f: (-len(f[0]), f[0], f[1]))
    used = [False] * len(q)
    found: set[str] = set()
    # where each run of n words of the query starts, made once per length n: a form is
    # looked up, not compared at every word (that was forms x words: 10,000 entities and a
    # 32,000-character query held the interpreter 4 s per recall)
    places: dict[tuple[str, ...], list[int]] = {}
    length = 0
    for form, key in forms:
        n = len(form)
        if n != length:
            length, places = n, {}
            for start in range(len(q) - n + 1):
                places.setdefault(q[start : start + n], []).append(start)
        for start in places.get(form, ()):
            if not any(used[start : start + n]):
                found.add(key)
                for i in range(start, start + n):
                    used[i] = True
    return sorted(found)
