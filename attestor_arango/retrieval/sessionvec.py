"""Dense session evidence: a session with several turns close to the query is about it.

Session coverage (coverage.py) tells how much of the query's wording a session
holds; this step is its counterpart in the embedding space. Reciprocal rank
fusion ranks turns one by one, so a session enters the top of the ranking
through its single best turn, and one chance match (a turn that shares the
query's topic word in passing) counts as much as a session that talks about
the topic over several turns. Here each session is scored by the mean cosine
of its ``k`` best turns among the candidates, a session with fewer than ``k``
candidate turns being padded with the lowest cosine of all candidates (so one
good turn alone is not enough). The scores are min-max scaled over the
candidate sessions to 0..1 and ``weight`` times that is added to each of the
session's turns, like session coverage.

The cosines are the vector lane's own scores (exact, and present for every
candidate once lane completion ran), so the step reads nothing from the store;
it is one pass over the candidates plus a sort per session. Memories without a
session id get nothing, so stand-alone facts rank as before; with fewer than two
candidate sessions, or without a vector lane, the step changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attestor_arango.retrieval.candidates import Candidate


def session_vector_scores(cands: Sequence[Candidate], k: int) -> dict[str, float]:
    """Each candidate session's mean of its ``k`` best vector-lane cosines (padded), by id."""
    floor = math.inf
    by_session: dict[str, list[float]] = {}
    for c in cands:
        cos = c.lane_scores.get("vector")
        if cos is None:
            continue
        floor = min(floor, cos)
        sid = c.memory.provenance.session_id
        if sid is not None:
            by_session.setdefault(sid, []).append(cos)
    out: dict[str, float] = {}
    for sid in sorted(by_session):
        best = sorted(by_session[sid], reverse=True)[:k]
        best += [floor] * (k - len(best))
        out[sid] = round(sum(best) / k, 12)
    return out


def apply_session_vector(cands: Sequence[Candidate], weight: float, k: int) -> None:
    """Adds ``weight`` times the min-max scaled session score to each turn of a session."""
    scores = session_vector_scores(cands, k)
    if len(scores) < 2:
        return
    lo, hi = min(scores.values()), max(scores.values())
    if hi <= lo:
        return
    bonus = {sid: round(weight * (s - lo) / (hi - lo), 12) for sid, s in scores.items()}
    for c in cands:
        sid = c.memory.provenance.session_id
        if sid in bonus:
            c.session_vector = bonus[sid]
            c.compute_relevance()
