"""Characters a reader does not see, though ``str.strip`` keeps them."""

from __future__ import annotations

import unicodedata

# characters that show nothing yet are neither whitespace nor format characters (category
# Cf, found by category): the variation selectors and the Hangul fillers
_BLANK_MARKS = frozenset("\u115f\u1160\u3164\uffa0") | frozenset(
    map(chr, [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
)


def invisible(char: str) -> bool:
    """Whether ``char`` shows nothing: whitespace, a control or format character (zero-width
    space, byte order mark, joiners, soft hyphen), a variation selector, a Hangul filler.
    Text made only of these is empty to a reader and holds no word to find it by."""
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf") or char in _BLANK_MARKS
