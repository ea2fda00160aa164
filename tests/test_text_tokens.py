"""The token estimator counts as its rule says: a word one per started 4 characters, a
punctuation mark one, whitespace nothing (budgets, and so rankings, depend on it)."""

from __future__ import annotations

import random
import re

from attestor_arango.text.tokens import count_tokens

_WORD_OR_MARK = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def _by_the_rule(text: str) -> int:
    """The rule spelled out word by word (the estimator's first form)."""
    return sum(1 if len(p) <= 4 else (len(p) + 3) // 4 for p in _WORD_OR_MARK.findall(text))


def test_counts_follow_the_rule_word_by_word() -> None:
    fixed = [
        "",
        "  \t\n",
        "a",
        "abcd",
        "abcde",
        "abcdefgh",
        "abcdefghi",
        "I moved to Berlin in 2023, didn't I?",
        "naïve café über straße",
        "日本語のテキストです",
        "x_y_z__long_identifier_42",
        "!!!...",
        "e-mail: foo@bar.com",
        "a\u0301b\u0301c\u0301d\u0301e",
        "٣٤٥٦٧ numbers 123456789",
    ]
    rng = random.Random(5)
    alphabet = "abZ_9 .,!é\u0301日\t\n-'٣"
    drawn = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    for text in fixed + drawn:
        assert count_tokens(text) == _by_the_rule(text), text
    assert [count_tokens(t) for t in ("abcd", "abcde", "abcdefghi", "a, b")] == [1, 2, 3, 3]
