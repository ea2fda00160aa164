"""The lanes of one recall: vector and text top-K, their completion, the LLM lanes.

The vector lane is re-scored by exact cosine (completion.py) once the text lane has
run: when completion will rank the lanes over their union, the union's stored vectors
are read and scored in one pass with the lane's own, instead of the lane's first and
the missing members' in a second read. Trace events keep their order (vector, bm25,
complete) and each step's own time (``RecallTrace.lap``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import NamedTuple, Protocol, TypeGuard, runtime_checkable

import numpy as np

from attestor_arango.embeddings import Embedder
from attestor_arango.errors import TenantLeakError
from attestor_arango.models import Memory
from attestor_arango.retrieval.completion import (
    Lane,
    Lanes,
    Ranked,
    complete_lanes,
    cosine_column,
    cosines,
    exact_cosine,
    lane_union,
    rescored_columns,
)
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.lanes import QueryExpander
from attestor_arango.retrieval.optional import speaks
from attestor_arango.retrieval.text_lane import text_lane
from attestor_arango.retrieval.trace import RecallTrace
from attestor_arango.retrieval.union_columns import (
    UnionCosines,
    by_cosine,
    complete_union,
    union_of,
)
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryStore, Store, TextHit, TextScore


def fatal(exc: Exception) -> None:
    """A tenant leak is never a lane failure: it fails the whole call (lock 3 of the
    tenant filter); only expected lane failures degrade the answer."""
    if isinstance(exc, TenantLeakError):
        raise exc


def describe(exc: BaseException) -> str:
    """A failure as ``errors`` names it: its type and message."""
    return f"{type(exc).__name__}: {exc}"


def _prefilter(config: RetrievalConfig) -> dict[str, int]:
    """The vector lane's approximate stage as keywords, only when it is on (a store written
    before it existed is then called as before)."""
    if not config.vector_prefilter:
        return {}
    return {"prefilter": config.vector_prefilter, "prefilter_rows": config.vector_prefilter_rows}


@runtime_checkable
class RanksVectors(Protocol):
    """A backend that hands the vector lane's ranking over before reading its rows (the
    embedded one): the ids and scores of ``vector_candidates``' hits, best first, as two
    columns (not ``ordered``: it may hand them over as a set, in no order and without scores,
    None); their rows are then read by ``get_memories`` (which drops those the scope does
    not return), as ``vector_candidates`` reads them. Not part of the Store contract: the
    lane is made once, with its exact cosines, and the rows read are the text lane's
    ``known``. A backend offering it answers recall's vector lane with it, so a
    subclass that changes ``vector_candidates`` must change ``vector_ranked`` too: recall
    never calls the other."""

    def vector_ranked(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
        ordered: bool = True,
    ) -> tuple[Sequence[str], Sequence[float] | None]: ...


def _ranks_vectors(store: object) -> TypeGuard[RanksVectors]:
    return speaks(store, RanksVectors, ("vector_ranked",))


def _ranked(
    store: object,
    scope: Scope,
    qvec: np.ndarray,
    view: TemporalView,
    config: RetrievalConfig,
    ordered: bool,
) -> tuple[Sequence[str], Sequence[float] | None] | None:
    """``vector_ranked``'s columns; None for a backend without it."""
    if not _ranks_vectors(store):
        return None
    k = config.vector_k
    return store.vector_ranked(scope, qvec, k, view, ordered=ordered, **_prefilter(config))


class Found(NamedTuple):
    """The vector lane as the store ranked it, as columns: each hit's memory, its score
    and its id, in order (no object per hit: the lane, a ``Lane``, is made once, with its
    cosines, by ``rescored_columns``). ``scores`` None: the store's k best as a set, in no
    order (``RanksVectors``, not ``ordered``)."""

    memories: list[Memory]
    scores: Sequence[float] | None
    ids: Sequence[str]


def vector_found(
    store: Store,
    scope: Scope,
    qvec: np.ndarray,
    view: TemporalView,
    config: RetrievalConfig,
    ordered: bool = False,
) -> tuple[Found, dict[str, Memory]]:
    """``vector_candidates``' hits as columns (``Found``) and their memories by id; from
    ``vector_ranked`` and one ``get_memories`` when the backend ranks first
    (``RanksVectors``): no ``Hit`` made for scores the lane replaces, and no memory's id
    read (its ranking gave them: see ``completion.rescored_columns``). Not ``ordered``:
    the backend may hand its k best over as a set (``Found.scores`` None), and does on most
    queries at 1k rows, scoring none of them (the lane scores them by cosine)."""
    ranked = _ranked(store, scope, qvec, view, config, ordered)
    if ranked is not None:
        ids, scores = ranked
        read = store.get_memories(scope, ids)
        if len(read) != len(ids):  # rows the scope does not return (or an id twice)
            if scores is not None:
                scores = [s for i, s in zip(ids, scores, strict=True) if i in read]
            ids = [i for i in ids if i in read]
        return Found(list(map(read.__getitem__, ids)), scores, ids), read
    hits = store.vector_candidates(scope, qvec, config.vector_k, view, **_prefilter(config))
    lane = Lane.of(hits)
    found = Found(lane.memories, lane.scores, lane.ids)
    return found, dict(zip(lane.ids, lane.memories, strict=True))


def run_lanes(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    query: str,
    view: TemporalView,
    config: RetrievalConfig,
    expanders: Mapping[str, QueryExpander] | None,
    errors: dict[str, str],
    tr: RecallTrace,
    vcache: dict[str, np.ndarray],
    tcache: dict[str, tuple[str, ...]],
) -> Lanes:
    """The lanes that ran; ``vcache`` collects the stored vectors read, ``tcache`` the
    scoring terms."""
    lanes: Lanes = []
    qvec: np.ndarray | None = None
    found: Found | None = None  # the vector lane as the store ranked it
    known: dict[str, Memory] = {}  # its memories by id
    text: Lane | None = None
    text_error: str | None = None
    # the re-scored pool below the lane's cut
    bm25_tail: Sequence[TextHit | TextScore] | Ranked = []
    if config.vector_enabled:
        try:
            qvec = embedder.embed([query])[0]
            found, known = vector_found(store, scope, qvec, view, config)
        except Exception as exc:  # a lane failure degrades, it does not abort
            fatal(exc)
            errors["vector_error"] = describe(exc)
            tr.step("vector", 0, 0, error=errors["vector_error"])
    vector_ms = tr.lap()
    if config.bm25_enabled:
        try:
            text, bm25_tail = text_lane(store, scope, query, view, config, known, tcache)
        except Exception as exc:
            fatal(exc)
            text_error = errors["bm25_error"] = describe(exc)
    text_ms = tr.lap()
    scores: UnionCosines | None = None  # the union's cosines, when completion runs
    if found is not None and qvec is not None:
        completing = text if config.lane_completion else None  # the lane to complete with
        ranked = partial(_reordered, store, scope, qvec, view, config, known)
        vector, scores = _vector_lane(
            store, scope, qvec, (found, ranked), known, completing, errors, vcache
        )
        vector_ms = round(vector_ms + tr.lap(), 3)  # the lane's time includes its scoring
        if vector is not None:
            lanes.append(("vector", vector))
            tr.step("vector", 0, len(vector), ms=vector_ms, ids=tr.ids(vector))
        else:
            tr.step("vector", 0, 0, ms=vector_ms, error=errors["vector_error"])
    if text is not None:
        lanes.append(("bm25", text))
        tr.step("bm25", 0, len(text), ms=text_ms, ids=tr.ids(text))
    elif text_error is not None:
        tr.step("bm25", 0, 0, ms=text_ms, error=text_error)
    if config.lane_completion and len(lanes) > 1:  # one lane has nothing to complete
        lanes = _complete(lanes, bm25_tail, scores, errors, tr)
    if expanders and (config.hyde_enabled or config.multi_query_enabled):
        _llm_lanes(
            store,
            embedder,
            scope,
            query,
            view,
            config,
            expanders,
            errors,
            tr,
            lanes,
            vcache,
            tcache,
        )
    return lanes


def _reordered(
    store: Store,
    scope: Scope,
    qvec: np.ndarray,
    view: TemporalView,
    config: RetrievalConfig,
    known: Mapping[str, Memory],
) -> Found:
    """The vector lane as the store ranks it, in order and with its scores, its memories
    those read before (``known``) where read: for ``rescored_columns`` when the lane came
    as a set and its order or scores decide after all (a rare hit without a cosine, or a
    NaN one)."""
    lane, _ = vector_found(store, scope, qvec, view, config, ordered=True)
    memories = [known.get(i, m) for i, m in zip(lane.ids, lane.memories, strict=True)]
    return Found(memories, lane.scores, lane.ids)


def _rescored(lane: tuple[Found, Callable[[], Found]], scores: Mapping[str, float]) -> Lane:
    """``rescored_columns`` of the lane (``Found``), or of the lane as the store ranks it
    (the callable) when the one handed over as a set cannot be rescored in any order."""
    (memories, own, ids), ranked = lane
    done = rescored_columns(memories, own, scores, ids)
    if done is None:
        memories, own, ids = ranked()
        done = rescored_columns(memories, own, scores, ids) or Lane([], [], [])
    return done


def _vector_lane(
    store: MemoryStore,
    scope: Scope,
    qvec: np.ndarray,
    lane: tuple[Found, Callable[[], Found]],
    known: Mapping[str, Memory],
    text: Lane | None,
    errors: dict[str, str],
    vcache: dict[str, np.ndarray],
) -> tuple[Lane | None, UnionCosines | None]:
    """The lane (``Found``, its memories by id ``known``, and how to rank it again in order:
    ``_rescored``) re-scored by exact cosine (None if that failed: ``vector_error``), and
    the cosines of the lanes' whole union with the text lane, ``text``, when completion
    will run (one read for both; if reading the union fails, the lane's own rows are read
    and ``completion_error`` says why). On the union's columns (union_columns.py) when
    they decide alone, else by ``_rescored``."""
    ids = lane[0].ids
    if text is not None:
        try:
            union = union_of(ids, known, text)
            # the union's ids, each once (a row's cosine does not depend on the order asked)
            wanted = list(dict.fromkeys([*ids, *text.ids])) if union is None else union.ids
            have, values = cosine_column(store, scope, qvec, wanted, vcache)
            if len(have) != len(wanted):  # a member without a stored vector
                union = None
            scores = UnionCosines(have, values, union)
            done = None if union is None else by_cosine(lane[0].memories, values[: len(ids)], ids)
            return (_rescored(lane, scores.by_id()) if done is None else done), scores
        except Exception as exc:  # completion fails; the lane may still be read alone
            fatal(exc)
            errors["completion_error"] = describe(exc)
    try:
        scored = cosines(store, scope, qvec, sorted(set(ids)), vcache)
        return (_rescored(lane, scored) if ids else Lane([], [], [])), None
    except Exception as exc:
        fatal(exc)
        errors.pop("completion_error", None)  # no lane to complete: the lane failed
        errors["vector_error"] = describe(exc)
        return None, None


def _complete(
    lanes: Lanes,
    bm25_tail: Sequence[TextHit | TextScore] | Ranked,
    scores: UnionCosines | None,
    errors: dict[str, str],
    tr: RecallTrace,
) -> Lanes:
    """Lane completion (completion.py; on the union's columns when they decide alone,
    union_columns.py); if it fails, the lanes as they came still rank."""
    failed = errors.get("completion_error")  # set when the union's vectors could not be read
    if failed is None:
        try:
            out = _completed(lanes, bm25_tail, scores)
            n_in = len(lane_union(lanes)) if tr.on else 0  # counted for the trace only
            tr.step("complete", n_in, sum(len(h) for _, h in out))
            return out
        except Exception as exc:  # the lanes as they came are still a ranking
            fatal(exc)
            failed = errors["completion_error"] = describe(exc)
    tr.step("complete", 0, 0, error=failed)
    return lanes


def _completed(
    lanes: Lanes, tail: Sequence[TextHit | TextScore] | Ranked, scores: UnionCosines | None
) -> Lanes:
    """``complete_lanes``' answer: ``complete_union``'s when the lanes are the vector lane
    and then the text lane, their union read as columns, and it decides alone."""
    if scores is None:
        return complete_lanes(lanes, tail, None)
    union = scores.union
    if union is not None and len(lanes) == 2 and lanes[0][0] == "vector" and lanes[1][0] == "bm25":
        ranked = tail if isinstance(tail, Ranked) else Ranked.of(tail)
        done = complete_union(lanes[0][1], lanes[1][1], ranked, union, scores.values)
        if done is not None:
            return done
    return complete_lanes(lanes, tail, scores.by_id())


def _llm_lanes(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    query: str,
    view: TemporalView,
    config: RetrievalConfig,
    expanders: Mapping[str, QueryExpander],
    errors: dict[str, str],
    tr: RecallTrace,
    lanes: Lanes,
    vcache: dict[str, np.ndarray],
    tcache: dict[str, tuple[str, ...]],
) -> None:
    """The optional LLM lanes (HyDE, multi-query), appended to ``lanes``."""
    if config.hyde_enabled and "hyde" in expanders:
        try:
            for i, text in enumerate(expanders["hyde"](query)):
                vec = embedder.embed([text])[0]
                found = store.vector_candidates(
                    scope, vec, config.vector_k, view, **_prefilter(config)
                )
                hits = exact_cosine(store, scope, vec, found, vcache)
                lanes.append((f"hyde_{i + 1}", hits))
            tr.step("hyde", 0, sum(len(h) for n, h in lanes if n.startswith("hyde_")))
        except Exception as exc:
            fatal(exc)
            errors["hyde_error"] = describe(exc)
            tr.step("hyde", 0, 0, error=errors["hyde_error"])
    if config.multi_query_enabled and "multi_query" in expanders:
        try:
            rewrites = expanders["multi_query"](query)[: config.multi_query_n]
            for i, text in enumerate(rewrites):
                known = lane_union(lanes)  # the memories read so far, not read again
                mq_hits, _ = text_lane(store, scope, text, view, config, known, tcache)
                lanes.append((f"mq_{i + 1}", mq_hits))
            tr.step("multi_query", 0, sum(len(h) for n, h in lanes if n.startswith("mq_")))
        except Exception as exc:
            fatal(exc)
            errors["multi_query_error"] = describe(exc)
            tr.step("multi_query", 0, 0, error=errors["multi_query_error"])
