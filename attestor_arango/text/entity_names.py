"""Which known entity names a text holds: the name index recall looks names up in.

Matching is on whole words against the names, aliases and keys of a scope's
entities, case-insensitively and in NFKC form, with no stemming: "Paris" stays
"Paris" (a trailing "s" is part of the name, never a plural to strip). A
possessive "Paris's" or "Caroline's" still matches because the apostrophe splits
words. Longer names are matched first and the words they cover are not reused, so
"New York City" does not also name "York".

The index is built once from the entities and then looked up by the runs of words
of the text, so finding names costs the text's length times the number of distinct
name lengths, not the number of entities: a tenant with thousands of entities paid
for all of them on every recall when the forms were rebuilt and sorted each time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_WORD = re.compile(r"\w+", re.UNICODE)


def name_words(text: str) -> tuple[str, ...]:
    """The words a name or a query is matched by (NFKC, lower case, ``\\w+`` runs)."""
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))


class EntityNames:
    """The surface forms of some entities as runs of words, by length, longest first.

    Built from ``(key, surfaces)`` pairs; a surface of fewer than two letters is left
    out (a one-letter name would match noise). Immutable once built.
    """

    __slots__ = ("_by_length",)

    def __init__(self, named: Iterable[tuple[str, Iterable[str]]]) -> None:
        table: dict[int, dict[tuple[str, ...], set[str]]] = {}
        for key, surfaces in named:
            for surface in set(surfaces):
                form = name_words(surface)
                if form and len("".join(form)) >= 2:
                    table.setdefault(len(form), {}).setdefault(form, set()).add(key)
        self._by_length: tuple[tuple[int, dict[tuple[str, ...], tuple[str, ...]]], ...] = tuple(
            (n, {form: tuple(sorted(keys)) for form, keys in forms.items()})
            for n, forms in sorted(table.items(), reverse=True)
        )

    def __len__(self) -> int:
        """The number of distinct surface forms held."""
        return sum(len(forms) for _, forms in self._by_length)

    def find(self, text: str) -> list[str]:
        """Keys of the entities whose name, alias or key occurs in ``text`` as whole words;
        sorted, de-duplicated.

        The tie rule: forms by length (longest first), then by their words, then by key;
        each takes the places of the text none before it took. Only forms that occur in
        the text are visited, in that order, so the answer is the one a pass over every
        form would give.
        """
        words = name_words(text)
        if not words:
            return []
        used = [False] * len(words)
        found: set[str] = set()
        for n, forms in self._by_length:
            if n > len(words):
                continue
            places: dict[tuple[str, ...], list[int]] = {}
            for start in range(len(words) - n + 1):
                run = words[start : start + n]
                if run in forms:
                    places.setdefault(run, []).append(start)
            for form in sorted(places):
                for key in forms[form]:
                    for start in places[form]:
                        if not any(used[start : start + n]):
                            found.add(key)
                            used[start : start + n] = [True] * n
        return sorted(found)
