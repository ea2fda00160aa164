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


def pack(cands: Sequence[Candidate], budget: int) -> tuple[list[Candidate], list[int], int]:
    """(the kept candidates in order, their token counts, tokens used).

    The counts first, in one comprehension (a text counted before: the memo's dict lookup;
    a count of 0 asks the memo again, which gives it back). When they sum to no more than
    ``budget`` the walk would keep every candidate (a count is never negative), so all are
    kept at once: a recall mostly keeps all ~85, and the walk cost ~1,200 instructions a
    candidate. The kept candidates and their counts are two lists, not a pair a candidate
    (~85 tuples a recall that the caller only unpacks)."""
    known, count = _tokens.known, _tokens
    counts = [known(text := c.fields["content"]) or count(text) for c in cands]
    used = sum(counts)
    if used <= budget:
        return list(cands), counts, used
    used = 0
    kept: list[Candidate] = []
    kept_counts: list[int] = []
    for c, tokens in zip(cands, counts, strict=True):
        if used + tokens > budget:
            continue
        used += tokens
        kept.append(c)
        kept_counts.append(tokens)
    return kept, kept_counts, used


def left_out(
    cands: Sequence[Candidate], kept: Sequence[Candidate]
) -> list[tuple[int, Candidate, int]]:
    """(place in ``cands``, 1-based; candidate; its tokens) of what ``pack`` did not keep."""
    kept_ids = {id(c) for c in kept}
    return [
        (place, c, _tokens(c.memory.content))
        for place, c in enumerate(cands, start=1)
        if id(c) not in kept_ids
    ]
