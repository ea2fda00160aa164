"""``budget.pack`` keeps what the plain greedy walk it replaced kept, with the same counts
(as two lists: the candidates and their counts).

The walk below is the code before the fast path (every candidate's count read through the
memo, one at a time); the fast path must give the same pairs and the same total on budgets
built to sit at the edges (the exact sum of every count, one below it, zero) and with texts
counted before or not.
"""

from __future__ import annotations

import random

from retrieval_fakes import mem

from attestor_arango.retrieval import budget
from attestor_arango.retrieval.budget import pack
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.text.tokens import count_tokens


def _walk(cands: list[Candidate], limit: int) -> tuple[list[tuple[Candidate, int]], int]:
    used = 0
    kept: list[tuple[Candidate, int]] = []
    for c in cands:
        tokens = count_tokens(c.memory.content)
        if used + tokens > limit:
            continue
        used += tokens
        kept.append((c, tokens))
    return kept, used


def _cands(rng: random.Random, n: int) -> list[Candidate]:
    words = ["alpha", "beta", "gamma", "delta", "a", "of", "Melanie's", "2023", "x"]
    return [
        Candidate(memory=mem(f"m{k}", " ".join(rng.choices(words, k=rng.randint(1, 40)))))
        for k in range(n)
    ]


def test_pack_equals_the_walk_on_edge_budgets() -> None:
    rng = random.Random(21)
    for case in range(300):
        cands = _cands(rng, rng.randint(0, 30))
        if case % 3 == 0:  # texts not counted yet: the memo fills in order
            budget._tokens.clear()
        total = sum(count_tokens(c.memory.content) for c in cands)
        limits = {0, total, max(0, total - 1), total + 1, rng.randint(0, total + 5)}
        for limit in sorted(limits):
            if case % 3 == 1:
                budget._tokens.clear()
            kept, counts, used = pack(cands, limit)
            want, want_used = _walk(cands, limit)
            assert list(zip(kept, counts, strict=True)) == want, (case, limit)
            assert used == want_used, (case, limit)
            assert [id(c) for c in kept] == [id(c) for c, _ in want]


def test_pack_all_fit_keeps_every_candidate_in_order() -> None:
    cands = _cands(random.Random(5), 12)
    total = sum(count_tokens(c.memory.content) for c in cands)
    kept, counts, used = pack(cands, total)
    assert kept == cands and kept is not cands and used == total == sum(counts)
    kept, counts, used = pack(cands, total - 1)  # one token short: the walk drops something
    assert len(kept) < len(cands) and used <= total - 1
