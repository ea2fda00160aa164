"""Reciprocal rank fusion: lanes' ranks become one fused score.

RRF is used as a score (sum over lanes of 1 / (k + rank)), never as a rank
floor. Normalised by the best score possible with the lanes that answered, it
lands on 0..1 so the graph bonus and the recency boost mean the same thing
whether one lane or four contributed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attestor_arango.models import known_us, us_of
from attestor_arango.retrieval.candidates import ZERO, Candidate, order
from attestor_arango.retrieval.completion import Lane
from attestor_arango.retrieval.rounding import round12


def fuse(
    lanes: Sequence[tuple[str, Lane]],
    rrf_k: int,
    weights: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """One candidate per memory id, in fused order (ties: t_created desc, id asc).

    ``lanes`` are (name, lane) pairs; a lane must already be in its own rank order
    (best first). Lanes that returned nothing still count towards the
    normaliser only if they ran; callers pass only lanes that ran. ``weights``
    scale a lane's contribution (default 1; LLM lanes use their base lane's).
    """
    weights = weights or {}
    if len(lanes) == 2 and lanes[1][0] < lanes[0][0]:
        # two lanes fuse in name order, so every candidate's ranks come sorted as its
        # breakdown lists them (candidates.py); a sum of two terms from 0.0 is the same
        # in either order. Three or more keep theirs: their sum depends on the order.
        lanes = [lanes[1], lanes[0]]
    named = len(lanes) <= 2  # then every candidate's ranks are in name order: ``named_ranks``
    by_id: dict[str, Candidate] = {}
    get, new, cls, zero = by_id.get, object.__new__, Candidate, ZERO
    total = 0.0
    for lane, found in lanes:
        w = float(weights.get(lane, 1.0))
        total += w
        share = _shares(w, rrf_k, len(found))  # 0.0 + w / (rrf_k + rank), by rank
        rank = 0
        vector, bm25 = lane == "vector", lane == "bm25"  # the scores a candidate keeps
        for memory, score, mid in zip(found.memories, found.scores, found.ids, strict=True):
            cand = get(mid)
            if cand is None:  # first named here: a new candidate, with its ranks and rrf
                rank += 1
                values = memory.__dict__  # its fields by key: the candidate keeps them
                # a new ``Candidate`` (this lane's rank, score and share of rrf) made slot by
                # slot, with no dataclass ``__init__`` (its keyword defaults and the
                # ``__post_init__`` call were ~70% of making one) and no call at all: every
                # slot but the three the loop after this one sets (rrf_norm, relevance,
                # fused). A field added to ``Candidate`` without a line here fails
                # tests/test_recall_fast_paths.py.
                c = new(cls)
                c.memory = memory
                c.lane_ranks = ranks = {lane: rank}
                c.named_ranks = ranks if named else None
                c.vector_score = score if vector else None  # as given: ``results``
                c.bm25_score = score if bm25 else None  # converts them
                c.rrf = share[rank]  # ``0.0 + w / (rrf_k + rank)``: the sum from 0.0
                c.graph_hops = None
                c.graph_bonus = zero  # candidates.ZERO: the 0.0 ``results`` knows as default
                c.decay = 1.0
                c.boost = zero
                c.freshness = zero
                c.session = zero
                c.coverage = zero
                c.time_cue = zero
                c.synthetic = False
                c.terms = None
                c.fields = values  # the memory's fields, as ``__post_init__`` reads them
                c.id = mid
                created, valid_from = values["t_created"], values["valid_from"]
                us = known_us(created)
                c.t_created = us = us_of(created) if us is None else us
                if valid_from is not created:  # else one datetime: a memory said as written
                    us = known_us(valid_from)
                    us = us_of(valid_from) if us is None else us
                c.valid_from = us
                by_id[mid] = c
                continue
            ranks = cand.lane_ranks
            if lane in ranks:  # a lane names each memory once
                continue
            rank += 1
            ranks[lane] = rank
            if vector:
                cand.vector_score = score
            elif bm25:
                cand.bm25_score = score
            cand.rrf += share[rank]
    best = total / (rrf_k + 1) if total > 0 else 1.0
    cands = list(by_id.values())
    # every other signal is still at its neutral value (decay 1.0, the rest 0.0), so
    # compute_relevance gives round((rrf_norm + 0.0) * 1.0 + 0.0 + ..., 12), which is
    # round(rrf_norm + 0.0, 12) (``x * 1.0`` is x, ``x + 0.0`` is x but for -0.0), with the
    # rounded rrf the breakdown reports (candidates.py). These are a function of the rrf and
    # ``best`` alone, and an rrf is a sum of 1 / (k + rank) over a memory's lanes: the same
    # few thousand values recur from recall to recall (a memory at rank i of one lane, at
    # ranks i and j of two), so each is computed once (``_scored``) and then looked up (an
    # rrf is summed from 0.0, so never -0.0: equal keys are the same value). The candidate
    # takes the table's entry as its ``fused`` and the entry's rrf object as its rrf (equal,
    # so the same float; a NaN is found only as itself), which ``results`` checks by identity.
    table = _scored(best)
    look = table.get
    for cand in cands:
        known = look(cand.rrf)
        if known is None:  # rrf / best, and both rounded as round(x, 12) rounds (round12)
            r = cand.rrf
            norm = r / best
            known = (r, norm, round12(r), round12(norm + 0.0))
            if len(table) >= _SCORED_MAX:
                table.clear()
            table[r] = known
        cand.fused = known
        cand.rrf, cand.rrf_norm, _, cand.relevance = known
    return order(cands) if cands else []


# an rrf's (rrf, rrf / best, round(rrf, 12), round(rrf / best + 0.0, 12)) by ``best`` (the
# configuration's and the lanes that answered: one or a few), then by rrf; bounded: a table
# is cleared when it holds _SCORED_MAX (~3 MB), and all are when a fifth best comes
_SCORED: dict[float, dict[float, tuple[float, float, float, float]]] = {}
_SCORED_MAX = 16_384


def _scored(best: float) -> dict[float, tuple[float, float, float, float]]:
    """The table of fused scores for this ``best`` (``fuse``)."""
    table = _SCORED.get(best)
    if table is None:
        if len(_SCORED) >= 4:  # another configuration: tables of older ones go
            _SCORED.clear()
        table = _SCORED[best] = {}
    return table


# a lane's share of rrf at each rank, ``0.0 + w / (rrf_k + rank)`` (index 0 unused; ``0.0 +``
# as a sum from 0.0 computes it: it differs from the share for -0.0 alone, and adding either
# to an rrf, which is never -0.0, gives the same float), by (w, rrf_k):
# the same few weights recur from recall to recall, so each share is computed once, not once
# a hit; a longer lane makes a new list (never extended in place: a reader may hold the old).
# Bounded: lists of at most _SCORED_MAX ranks are kept, of at most 8 (w, rrf_k) (~4 MB)
_SHARES: dict[tuple[float, int], list[float]] = {}


def _shares(w: float, rrf_k: int, n: int) -> list[float]:
    """The shares of ranks 1 to ``n`` at least, each at its rank (``fuse``)."""
    shares = _SHARES.get((w, rrf_k))
    if shares is None or len(shares) <= n:
        shares = [0.0]  # rank 0 is never taken
        shares += [0.0 + w / (rrf_k + rank) for rank in range(1, n + 1)]
        if n <= _SCORED_MAX:
            if len(_SHARES) >= 8:  # another configuration: the lists of older ones go
                _SHARES.clear()
            _SHARES[(w, rrf_k)] = shares
    return shares
