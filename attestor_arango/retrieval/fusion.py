"""Reciprocal rank fusion: lanes' ranks become one fused score.

RRF is used as a score (sum over lanes of 1 / (k + rank)), never as a rank
floor. Normalised by the best score possible with the lanes that answered, it
lands on 0..1 so the graph bonus and the recency boost mean the same thing
whether one lane or four contributed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.store.protocol import Hit


def fuse(
    lanes: Sequence[tuple[str, Sequence[Hit]]],
    rrf_k: int,
    normalize: bool = True,
    weights: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """One candidate per memory id, in fused order (ties: t_created desc, id asc).

    ``lanes`` are (name, hits) pairs; a lane's hits must already be in its own
    rank order (best first). Lanes that returned nothing still count towards the
    normaliser only if they ran; callers pass only lanes that ran. ``weights``
    scale a lane's contribution (default 1; LLM lanes use their base lane's).
    """
    weights = weights or {}
    by_id: dict[str, Candidate] = {}
    total = 0.0
    for lane, hits in lanes:
        w = float(weights.get(lane, 1.0))
        total += w
        seen: set[str] = set()
        rank = 0
        for hit in hits:
            if hit.memory.id in seen:  # a lane names each memory once
                continue
            seen.add(hit.memory.id)
            rank += 1
            cand = by_id.get(hit.memory.id)
            if cand is None:
                cand = by_id[hit.memory.id] = Candidate(memory=hit.memory)
            if cand.terms is None:
                cand.terms = hit.terms
            cand.lane_ranks[lane] = rank
            cand.lane_scores[lane] = float(hit.score)
            cand.rrf += w / (rrf_k + rank)
    best = total / (rrf_k + 1) if total > 0 else 1.0
    for cand in by_id.values():
        cand.rrf_norm = cand.rrf / best if normalize else cand.rrf
        cand.compute_relevance()
    return order(list(by_id.values()))


def score_gap(hits: Sequence[Hit], depth: int) -> float | None:
    """How far a lane's best score stands above its top ``depth``: (top - mean) / stdev.

    A query performance predictor: a lane whose first hit clearly beats the rest
    found something specific; a lane whose scores are flat did not. Scale-free, so
    cosines and BM25 scores compare. None with fewer than three hits or flat scores.
    """
    scores = [float(h.score) for h in hits[:depth]]
    if len(scores) < 3:
        return None
    mean = math.fsum(scores) / len(scores)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in scores) / len(scores))
    if sd <= 0.0:
        return None
    return (scores[0] - mean) / sd


def adaptive_weights(
    lanes: Sequence[tuple[str, Sequence[Hit]]],
    weights: Mapping[str, float],
    depths: Mapping[str, int],
) -> dict[str, float]:
    """``weights`` with the lanes named in ``depths`` rescaled by their score gaps.

    Each such lane's weight is multiplied by its gap over the lanes' mean gap, so
    the weights keep their sum (and the RRF normaliser its meaning) and the lane
    that found something specific counts more. Unchanged unless every such lane ran
    and has a gap.
    """
    out = dict(weights)
    gaps = {name: score_gap(hits, depths[name]) for name, hits in lanes if name in depths}
    if len(gaps) != len(depths) or any(g is None for g in gaps.values()):
        return out
    known = {name: g for name, g in gaps.items() if g is not None}
    total = math.fsum(known[name] for name in sorted(known))
    if total <= 0.0:
        return out
    for name in sorted(known):
        out[name] = round(out[name] * len(known) * known[name] / total, 12)
    return out
