"""Greedy budget fit: walk the final order, keep what fits.

The order is the MMR order (or relevance order with MMR off) and is never
re-sorted here. An item that does not fit is skipped and smaller later items
may still fit, so the budget is used without reordering anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from attestor_arango.memo import memo
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.text.tokens import count_tokens


@memo(32_768)
def _tokens(text: str) -> int:
    return count_tokens(text)


def pack(cands: Sequence[Candidate], budget: int) -> tuple[list[tuple[Candidate, int]], int]:
    """(kept candidates with their token counts, tokens used)."""
    used = 0
    kept: list[tuple[Candidate, int]] = []
    known = _tokens.known  # a text counted before: a dict lookup, not the memo's call
    for c in cands:
        content = c.fields["content"]  # the memory's (candidates.py)
        tokens = known(content)
        if tokens is None:
            tokens = _tokens(content)
        if used + tokens > budget:
            continue
        used += tokens
        kept.append((c, tokens))
    return kept, used


def left_out(
    cands: Sequence[Candidate], kept: Sequence[tuple[Candidate, int]]
) -> list[tuple[int, Candidate, int]]:
    """(place in ``cands``, 1-based; candidate; its tokens) of what ``pack`` did not keep."""
    kept_ids = {id(c) for c, _ in kept}
    return [
        (place, c, _tokens(c.memory.content))
        for place, c in enumerate(cands, start=1)
        if id(c) not in kept_ids
    ]
