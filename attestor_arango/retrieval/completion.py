"""Lane completion: every candidate gets a rank in every lane that can score it.

Reciprocal rank fusion adds ``1 / (k + rank)`` per lane, and a candidate a lane
did not return adds nothing. But a lane returns only its top-K: a turn just below
the vector lane's cut (or one the text lane ranked 60th) is not dissimilar, it is
merely cut. With ``k = 60`` the step from rank K to "absent" is as large as the
step from rank 1 to rank K, so a turn that is BM25's first hit but 51st by
cosine fuses to half the score of a turn that is 40th in both lanes. That is an
artefact of the cut, not evidence.

Completion removes it: after the lanes ran, each candidate of their union that a
lane missed is ranked by that lane's own score below the lane's top-K, in the
lane's order. The vector lane scores the missing candidates by exact cosine from
their stored vectors; the text lane takes them from the BM25 re-scoring it
already computed over its fetched pool (a candidate with no query term in it
still gets no text rank: that absence is real). Nothing new enters the candidate
set, only ranks are filled in, and all of it depends on the visible candidates
alone, so replays rank alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeGuard, TypeVar, runtime_checkable

import numpy as np

from attestor_arango.models import Memory, us_of
from attestor_arango.retrieval.optional import speaks
from attestor_arango.retrieval.rounding import round_array
from attestor_arango.scope import Scope
from attestor_arango.store.codec import row_norms, vector_norm
from attestor_arango.store.protocol import Hit, MemoryStore, TextHit, TextScore

T = TypeVar("T")
C = TypeVar("C", bound=dict[str, np.ndarray] | None)


class Ranked(NamedTuple):
    """Re-scored text-pool rows as two columns, best first: ids and scores (``ids[j]``
    scored ``scores[j]``). What lane completion and the text lane read of the pool, without
    an object per row: the pool below the lane's cut is ~150 rows, of which completion keeps
    the few in the lanes' union."""

    ids: list[str]
    scores: list[float]

    @classmethod
    def of(cls, rows: Sequence[TextHit | TextScore]) -> Ranked:
        """The columns of rows in their order."""
        return cls([t.id for t in rows], [t.score for t in rows])


@dataclass(frozen=True, slots=True)
class Lane:
    """A lane's candidates as columns, best first: ``memories[j]``, its id ``ids[j]`` and the
    lane's raw score ``scores[j]`` (higher is better). What lane completion and fusion read,
    without an object per candidate (a recall's lanes hold ~150 at 1k); its length is the
    number of candidates."""

    memories: list[Memory]
    scores: list[float]
    ids: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, hits: Sequence[Hit]) -> Lane:
        """The lane of a store's ``hits`` (``vector_candidates``), in their order."""
        memories = [h.memory for h in hits]
        return cls(memories, [h.score for h in hits], [m.id for m in memories])


Lanes = list[tuple[str, Lane]]  # the lanes that ran, by name, in the order they ran


class VectorCache(dict[str, np.ndarray]):
    """One recall's stored vectors by id (``cached_vectors``), with matrices read whole (the
    lanes' union, ``cosines``) kept as they came and split into rows only when rows are
    read through this module (``settled``): splitting ~85 rows into arrays cost ~130k
    instructions a recall, ~1% at 1k, and only freshness, on some recalls, reads them
    again. A plain dict works as well (every matrix is split at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[tuple[list[str], np.ndarray]] = []
        # ``cosines``' float64 widening of a kept matrix and its rows' norms, (matrix, wide,
        # norms): freshness divides these instead of widening and norming the rows again
        self.wide: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # whether the backend handed that widening over (it keeps its rows widened: a small
        # embedded index, which keeps them as unit vectors too, ``freshness.UnitVectors``)
        self.widened_by_store = False


def keep_rows(cache: dict[str, np.ndarray], ids: list[str], rows: np.ndarray) -> None:
    """``cache.update(zip(ids, rows))``: at once for a plain dict, when next read for a
    ``VectorCache``."""
    if isinstance(cache, VectorCache):
        cache.pending.append((ids, rows))
    else:
        cache.update(zip(ids, rows, strict=True))


def settled(cache: C) -> C:
    """``cache`` with every kept matrix split into its rows (in the order kept, as
    ``keep_rows`` would have added them)."""
    if isinstance(cache, VectorCache) and cache.pending:
        for ids, rows in cache.pending:
            cache.update(zip(ids, rows, strict=True))
        cache.pending.clear()
    return cache


def read_through(
    cache: dict[str, T], ids: Sequence[str], read: Callable[[list[str]], Mapping[str, T]]
) -> dict[str, T]:
    """``read``'s answer for ``ids`` through one recall's ``cache``: only the ids it lacks
    are read, and what comes back is added (a row's vector or terms never change)."""
    wanted = [i for i in ids if i not in cache]
    if wanted:
        cache.update(read(wanted))
    return {i: cache[i] for i in ids if i in cache}


def cached_vectors(
    store: MemoryStore, scope: Scope, ids: Sequence[str], cache: dict[str, np.ndarray] | None
) -> dict[str, np.ndarray]:
    """The stored vectors of ``ids``; through ``cache`` (one recall's reads) when given, so
    the lanes, lane completion and MMR read each candidate's vector once."""
    if cache is None:
        return store.get_vectors(scope, ids)
    return read_through(settled(cache), ids, lambda wanted: store.get_vectors(scope, wanted))


@runtime_checkable
class VectorMatrix(Protocol):
    """A backend that hands stored vectors over as one matrix (the embedded one: its vector
    index gathers the rows in one step). Not part of the Store contract; it may decline
    (None: it does not hold every one), and then ``get_vectors`` is read."""

    def vector_matrix(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray] | None: ...


def _has_matrix(store: object) -> TypeGuard[VectorMatrix]:
    return speaks(store, VectorMatrix, ("vector_matrix",))


def stored_matrix(
    store: MemoryStore, scope: Scope, ids: Sequence[str], cache: dict[str, np.ndarray] | None
) -> tuple[list[str], np.ndarray]:
    """Those of ``ids`` with a stored vector, in their order, and the vectors as one matrix
    (row j: the j-th of them): ``cached_vectors``' answer with its rows joined.

    When ``cache`` holds none of them (the lanes' union: the first read of a recall) a
    backend that can (``VectorMatrix``) gathers them as one matrix, and the cache gets
    its rows; joining a dict of ~85 rows again cost more than the arithmetic on them.
    """
    if _has_matrix(store) and not ((cache := settled(cache)) and any(i in cache for i in ids)):
        found = store.vector_matrix(scope, ids)
        if found is not None:
            if cache is not None:
                keep_rows(cache, *found)
            return found
    vecs = cached_vectors(store, scope, ids, cache)
    have = [i for i in ids if i in vecs]
    if not have:
        return have, np.zeros((0, 0), dtype=np.float32)
    # the rows joined flat: the same values as np.array(rows)
    return have, np.concatenate([vecs[i] for i in have]).reshape(len(have), -1)


@runtime_checkable
class NormedMatrix(Protocol):
    """A backend that hands stored vectors over as one matrix with each one's float64 norm
    (``codec.row_norms``'s floats), kept per row between calls (the embedded one), and the
    matrix widened to float64 when it keeps its rows widened (None: the caller widens it).
    Not part of the Store contract; None as ``VectorMatrix``'s."""

    def vector_matrix_normed(
        self, scope: Scope, ids: Sequence[str]
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None] | None: ...


def _has_norms(store: object) -> TypeGuard[NormedMatrix]:
    return speaks(store, NormedMatrix, ("vector_matrix_normed",))


def _stored_normed(
    store: MemoryStore, scope: Scope, ids: Sequence[str], cache: dict[str, np.ndarray] | None
) -> tuple[list[str], np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``stored_matrix``, with the rows' norms and the matrix widened to float64 when the
    backend keeps them (``NormedMatrix``, read when ``cache`` holds none of ``ids``, as
    ``stored_matrix`` reads ``VectorMatrix``); None: the caller computes them (``row_norms``,
    ``astype``)."""
    if _has_norms(store) and not ((cache := settled(cache)) and any(i in cache for i in ids)):
        found = store.vector_matrix_normed(scope, ids)
        if found is not None:
            have, rows, norms, wide = found
            if cache is not None:
                keep_rows(cache, have, rows)
            return have, rows, norms, wide
    have, rows = stored_matrix(store, scope, ids, cache)
    return have, rows, None, None


def cosines(
    store: MemoryStore,
    scope: Scope,
    qvec: np.ndarray,
    ids: Sequence[str],
    cache: dict[str, np.ndarray] | None = None,
) -> dict[str, float]:
    """``cosine_column``'s answer by id."""
    have, values = cosine_column(store, scope, qvec, ids, cache)
    return dict(zip(have, values.tolist(), strict=True))


def cosine_column(
    store: MemoryStore,
    scope: Scope,
    qvec: np.ndarray,
    ids: Sequence[str],
    cache: dict[str, np.ndarray] | None = None,
) -> tuple[list[str], np.ndarray]:
    """Exact float64 cosine to ``qvec``, rounded to 9 places, of each of ``ids`` that has a
    stored vector (one read and one pass over arrays for all of them), as two columns:
    those ids, in their order, and their cosines (float64).

    An index's float32 scores can differ in the last bits with the shape of the
    matrix it scanned (and so with rows added after a replay's as_of); exact
    float64 cosine over the candidates' own vectors depends on them alone.
    ``cache``: see ``cached_vectors``. The rows' norms come from the backend when it
    keeps them (``NormedMatrix``: the same floats ``row_norms`` gives).
    """
    have, rows, norms, wide = _stored_normed(store, scope, ids, cache)
    if not have:
        return have, np.zeros(0)
    q = np.asarray(qvec, dtype=np.float64)
    q = q / (vector_norm(q) or 1.0)
    mat = rows.astype(np.float64) if wide is None else wide  # widened: each float32 exactly
    if norms is None:
        norms = row_norms(rows)
    # row by row, elementwise then summed: a row's cosine does not depend on the
    # other rows in the batch (a BLAS kernel's summation order may vary with shape)
    dots = (mat * q).sum(axis=1)
    if isinstance(cache, VectorCache):  # the same floats freshness would compute (unit_rows)
        cache.wide = (rows, mat, norms)
        cache.widened_by_store = wide is not None
    # round(dot / (norm or 1.0), 9) of each row, the division and the rounding over
    # the array at once (IEEE division as Python's; round_array is round, bit for bit)
    return have, round_array(dots / np.where(norms == 0.0, 1.0, norms), 9)


def tie_ordered(memories: Sequence[Memory], scores: Sequence[float], ids: Sequence[str]) -> Lane:
    """The lane of ``memories`` scored ``scores``, ids ``ids`` (``j``-th of each: one
    candidate), sorted by the tie rule: score descending, then newer first, then id.

    When no two scores are equal and none is NaN (the common case: 9-place cosines; a NaN
    makes the sum NaN) the scores alone decide: the places sorted by score (a C key
    function: no Python call per candidate), and no creation time is looked up; a tie (or
    a NaN) sorts the places by the whole rule.
    """
    total = sum(scores)
    if len(set(scores)) == len(scores) and total == total:
        # descending on distinct scores: the one order, as ascending on their negations
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    else:
        order = sorted(
            range(len(scores)),
            key=lambda j: (-scores[j], -us_of(memories[j].t_created), ids[j]),
        )
    return Lane(
        list(map(memories.__getitem__, order)),
        list(map(scores.__getitem__, order)),
        list(map(ids.__getitem__, order)),
    )


def rescored(hits: Sequence[Hit], scores: Mapping[str, float]) -> Lane:
    """The store's ``hits`` (``vector_candidates``) as a lane, with the cosines of
    ``scores`` (a hit without one keeps its own score, to 6 places), re-ordered by the tie
    rule (``rescored_columns``)."""
    lane = Lane.of(hits)
    return rescored_columns(lane.memories, lane.scores, scores, lane.ids) or Lane([], [], [])


def rescored_columns(
    memories: Sequence[Memory],
    own: Sequence[float] | None,
    scores: Mapping[str, float],
    ids: Sequence[str] | None = None,
) -> Lane | None:
    """``rescored`` of hits given as columns (``memories[j]`` scored ``own[j]``): the lane,
    in its final order (``tie_ordered``). Those without a
    cosine first, then the others, each in the order given, before the sort. ``ids``: the
    memories' ids in their order, when the caller has them (a model's attribute read costs
    ~450 instructions: pydantic's ``__getattr__`` keeps CPython's fast path off); else each
    memory's id is read once.

    ``own`` None: the hits came in no particular order and without scores of their own (the
    store's k best as a set: ``vector_ranked(ordered=False)``). Their order then holds only
    while it cannot matter: every hit has a cosine and none is NaN (the tie rule orders
    distinct ids alike whatever order they came in); else None, and the caller rescores
    the lane as ranked."""
    if ids is None:
        ids = [memory.id for memory in memories]
    got: list[float | None] = list(map(scores.get, ids))
    if None not in got:  # every hit has a cosine (a backend's rows all have vectors)
        if own is None and (total := sum(got)) != total:  # type: ignore[arg-type]
            return None  # a NaN: its place depends on the order the hits came in
        return tie_ordered(memories, got, ids)  # type: ignore[arg-type]  # no None left
    if own is None:
        return None
    first = [j for j, score in enumerate(got) if score is None]
    rest = [j for j, score in enumerate(got) if score is not None]
    return tie_ordered(
        [memories[j] for j in first + rest],
        [round(float(own[j]), 6) for j in first] + [got[j] for j in rest],  # type: ignore[misc]
        [ids[j] for j in first + rest],
    )


def exact_cosine(
    store: MemoryStore,
    scope: Scope,
    qvec: np.ndarray,
    hits: Sequence[Hit],
    cache: dict[str, np.ndarray] | None = None,
) -> Lane:
    """The store's vector ``hits`` (``vector_candidates``) re-scored in float64 from the
    stored vectors (``cosines``), re-ordered by the tie rule: a lane."""
    if not hits:
        return Lane([], [], [])
    ids = sorted({h.memory.id for h in hits})
    return rescored(hits, cosines(store, scope, qvec, ids, cache))


def lane_union(lanes: Lanes) -> dict[str, Memory]:
    """Every memory any lane returned, by id (sorted ids, so iteration is stable)."""
    found = {i: m for _, lane in lanes for i, m in zip(lane.ids, lane.memories, strict=True)}
    return {i: found[i] for i in sorted(found)}


def missing(lane: Lane, union: dict[str, Memory]) -> list[Memory]:
    """The union's memories a lane did not return, in id order."""
    have = set(lane.ids)
    return [m for i, m in union.items() if i not in have]


def complete(lane: Lane, tail: Lane, union: dict[str, Memory]) -> Lane:
    """``lane``, then the members of ``union`` found in ``tail`` that ``lane`` lacks.

    ``tail`` must be in the lane's own order (best first) and rank below every
    candidate of ``lane``; each id is appended once, at its first place in ``tail``.
    """
    out = Lane(list(lane.memories), list(lane.scores), list(lane.ids))
    seen = set(lane.ids)
    for memory, score, i in zip(tail.memories, tail.scores, tail.ids, strict=True):
        if i in union and i not in seen:
            seen.add(i)
            out.memories.append(memory)
            out.scores.append(score)
            out.ids.append(i)
    return out


def complete_lanes(
    lanes: Lanes,
    text_tail: Sequence[TextHit | TextScore] | Ranked,
    vector_scores: Mapping[str, float] | None,
) -> Lanes:
    """The vector and text lanes ranked over their union; other lanes as they came.

    The vector lane's missing candidates are scored by ``vector_scores``, the exact
    cosines (``cosines``) of the union's members, read with the lane's own in one pass;
    the text lane's come from ``text_tail``, the re-scored pool below its cut
    (light rows, or their columns (``Ranked``): every union member is a decoded memory
    already).
    """
    tail = text_tail if isinstance(text_tail, Ranked) else Ranked.of(text_tail)
    # ``lane_union``, ``missing`` and ``complete`` with each lane read once: the union of
    # the lanes' memories by id (a later lane's memory of an id last)
    union: dict[str, Memory] = {}
    for _, lane in lanes:
        union.update(zip(lane.ids, lane.memories, strict=True))
    out: Lanes = []
    for name, lane in lanes:
        if name == "vector" and vector_scores is not None:
            # ``rescored`` of the missing members scored 0.0: each missing member once, in
            # id order, so all of them follow the lane's own (``complete``)
            unscored: list[str] = []
            scored: list[str] = []
            their: list[float] = []  # the scored ones' cosines
            for i in sorted(union.keys() - set(lane.ids)):
                score = vector_scores.get(i)
                if score is None:
                    unscored.append(i)
                else:
                    scored.append(i)
                    their.append(score)
            added_ids = unscored + scored
            added = tie_ordered(
                list(map(union.__getitem__, added_ids)), [0.0] * len(unscored) + their, added_ids
            )
            out.append(
                (
                    name,
                    Lane(
                        lane.memories + added.memories,
                        lane.scores + added.scores,
                        lane.ids + added.ids,
                    ),
                )
            )
        elif name == "bm25":
            memories = list(lane.memories)  # ``complete`` over the tail's union members
            scores = list(lane.scores)
            ids = list(lane.ids)
            seen = set(ids)
            for i, score in zip(tail.ids, tail.scores, strict=True):
                if i in union and i not in seen:
                    seen.add(i)
                    memories.append(union[i])
                    scores.append(score)
                    ids.append(i)
            out.append((name, Lane(memories, scores, ids)))
        else:
            out.append((name, lane))
    return out
