"""A small in-memory Store for the retrieval tests: just the read primitives recall uses.

It filters by the temporal view exactly as the protocol describes and returns
raw signals (cosine, a plain BM25), never a ranking of its own beyond each
lane's top-k, so the tests exercise the pipeline and nothing else. Hand-set
lane results (``vector_hits`` / ``text_hits``) let a test fix lane orders.
"""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN, from_us, to_us
from attestor_arango.models import Entity, Memory, Provenance, Relation, content_hash
from attestor_arango.retrieval.completion import Lane
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import (
    BackedRelations,
    EmbeddingSpace,
    Hit,
    KnownEntities,
    TextHit,
    pool_of,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def as_lanes(lanes: Sequence[tuple[str, Sequence[Hit]]]) -> list[tuple[str, Lane]]:
    """Lanes written as (memory, score) hits, as the columns fusion reads (``Lane.of``)."""
    return [(name, Lane.of(hits)) for name, hits in lanes]


_WORD = re.compile(r"\w+")


def lanes_of(
    store: Any, emb: Any, scope: Scope, query: str, view: TemporalView, config: Any,
    errors: dict[str, str],
) -> list[tuple[str, Lane]]:  # fmt: skip
    """``lane_run.run_lanes`` of ``query`` with no expander, no trace, fresh caches: the lanes
    as a recall runs them (the lane tests' one set-up); failures go to ``errors``."""
    from attestor_arango.retrieval import lane_run
    from attestor_arango.retrieval.trace import RecallTrace

    tracer = RecallTrace(None, "r", scope.tenant)
    return lane_run.run_lanes(store, emb, scope, query, view, config, None, errors, tracer, {}, {})


def mem(
    mid: str,
    content: str = "",
    *,
    day: float = 0,
    entity: str | None = None,
    confidence: float = 1.0,
    session: str | None = None,
    created_day: float | None = None,
    tenant: str = "t",
    namespace: str = "ns",
    expired_day: float | None = None,
) -> Memory:
    """A memory whose valid_from is T0 + day and t_created T0 + created_day (default: day)."""
    created = T0 + timedelta(days=day if created_day is None else created_day)
    return Memory(
        id=mid,
        tenant=tenant,
        namespace=namespace,
        content=content or f"memory {mid}",
        entity=entity,
        confidence=confidence,
        valid_from=T0 + timedelta(days=day),
        t_created=created,
        t_expired=None if expired_day is None else T0 + timedelta(days=expired_day),
        provenance=Provenance(agent_id="a", role="executor", session_id=session),
        content_hash=content_hash(content or mid),
    )


def view_at(day: float) -> TemporalView:
    return TemporalView(as_of=to_us(T0 + timedelta(days=day)))


def _visible(m: Memory, view: TemporalView) -> bool:
    created = m.us("t_created")
    expired = m.us("t_expired")
    return created <= view.as_of and expired > view.t_expired_after


# what a backend may offer beside the Store contract, asked for through retrieval's own
# protocols (text_lane.ScoresPool); this fake offers none of it
BESIDE_THE_CONTRACT = frozenset(
    {"text_pool_scores", "vector_matrix", "vector_matrix_normed", "vector_ranked", "vector_units"}
)


class FakeStore:
    backend = "fake"

    def __init__(self, embedder: Any = None) -> None:
        self.embedder = embedder
        self.memories: dict[str, Memory] = {}
        self.vectors: dict[str, np.ndarray] = {}
        self.entities: list[Entity] = []
        self.relations: list[Relation] = []
        self.vector_hits: list[Hit] | None = None
        self.text_hits: list[Hit] | None = None
        self.fail: set[str] = set()
        self.calls: list[str] = []
        # the prefilter and its row threshold each vector_candidates call got
        self.prefilters: list[tuple[int, int]] = []
        # the tenant's recorded embedding space; None: vectors are taken as the embedder's
        self.space: EmbeddingSpace | None = None

    # setup -------------------------------------------------------------------
    def add(self, m: Memory, vector: Sequence[float] | None = None) -> Memory:
        self.memories[m.id] = m
        if vector is not None:
            v = np.asarray(vector, dtype=np.float32)
            self.vectors[m.id] = v / (np.linalg.norm(v) or 1.0)
        elif self.embedder is not None:
            self.vectors[m.id] = self.embedder.embed([m.content])[0]
        return m

    def entity(self, key: str, name: str | None = None, aliases: tuple[str, ...] = ()) -> None:
        self.entities.append(
            Entity(tenant="t", namespace="ns", key=key, name=name or key, aliases=aliases)
        )

    def relate(
        self, rid: str, source: str, relation: str, target: str, memory_id: str | None = None
    ) -> None:
        self.relations.append(
            Relation(
                id=rid,
                tenant="t",
                namespace="ns",
                source=source,
                relation=relation,
                target=target,
                memory_id=memory_id,
                t_created=T0,
            )
        )

    def _check(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise RuntimeError(f"{name} is down")

    # protocol subset -------------------------------------------------------------
    def vector_candidates(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[Hit]:
        self._check("vector_candidates")
        self.prefilters.append((prefilter, prefilter_rows))
        if self.vector_hits is not None:
            return self.vector_hits[:k]
        scored = [
            Hit(m, float(np.dot(self.vectors[m.id], vector)))
            for m in self.memories.values()
            if _visible(m, view) and m.id in self.vectors
        ]
        scored.sort(key=lambda h: (-h.score, h.memory.id))
        return scored[:k]

    def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        self._check("text_pool")
        return pool_of(self._text_hits(query, k, view))

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        return {}  # keeps none, like a backend without a text index of its own: tokenised

    def _text_hits(self, query: str, k: int, view: TemporalView) -> list[Hit]:
        if self.text_hits is not None:
            return self.text_hits[:k]
        docs = [m for m in self.memories.values() if _visible(m, view)]
        q = set(_WORD.findall(query.lower()))
        toks = {m.id: _WORD.findall(m.content.lower()) for m in docs}
        df = Counter(t for m in docs for t in set(toks[m.id]))
        n = len(docs)
        avg = sum(len(t) for t in toks.values()) / max(n, 1)
        out = []
        for m in docs:
            tf = Counter(toks[m.id])
            s = 0.0
            for t in q & set(tf):
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(toks[m.id]) / avg))
            if s > 0:
                out.append(Hit(m, s))
        out.sort(key=lambda h: (-h.score, h.memory.id))
        return out[:k]

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]:
        self._check("get_memories")
        return {i: self.memories[i] for i in ids if i in self.memories}

    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None:
        return self.space  # read before any lane; not a counted call

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._check("get_vectors")
        return {i: self.vectors[i] for i in ids if i in self.vectors}

    def list_entities(self, scope: Scope) -> list[Entity]:
        self._check("list_entities")
        return list(self.entities)

    def known_entities(self, scope: Scope) -> KnownEntities:
        self._check("known_entities")
        return KnownEntities.of(self.entities)

    def relations_touching(
        self, scope: Scope, keys: Sequence[str], view: TemporalView
    ) -> list[Relation]:
        self._check("relations_touching")
        ks = set(keys)
        return [r for r in self.relations if r.source in ks or r.target in ks]

    def relations_backed(
        self,
        scope: Scope,
        keys: Sequence[str],
        view: TemporalView,
        candidates: Sequence[str],
        limit: int,
    ) -> BackedRelations:
        """The contract read plainly: every relation touching ``keys`` the view sees, kept
        when its backing memory is a candidate or a visible memory of this store."""
        self._check("relations_backed")
        ks, held = set(keys), set(candidates)
        backed = sorted(
            (
                r
                for r in self.relations
                if (r.source in ks or r.target in ks)
                and to_us(r.t_created) <= view.as_of
                and (OPEN if r.t_expired is None else to_us(r.t_expired)) > view.t_expired_after
                and (
                    r.memory_id is None
                    or r.memory_id in held
                    or (r.memory_id in self.memories and _visible(self.memories[r.memory_id], view))
                )
            ),
            key=lambda r: (-to_us(r.t_created), r.id),
        )
        usable = [r for r in backed if r.memory_id is None or r.memory_id not in held]
        ends = frozenset(k for r in backed for k in (r.source, r.target) if k in ks)
        return BackedRelations(tuple(usable[:limit]), ends)

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        self._check("hops")
        adj: dict[str, set[str]] = {}
        for r in self.relations:
            adj.setdefault(r.source, set()).add(r.target)
            adj.setdefault(r.target, set()).add(r.source)
        dist = {s: 0 for s in sources}
        queue = deque(sources)
        while queue:
            node = queue.popleft()
            if dist[node] >= max_depth:
                continue
            for nxt in sorted(adj.get(node, ())):
                if nxt not in dist:
                    dist[nxt] = dist[node] + 1
                    queue.append(nxt)
        return dist

    def __getattr__(self, name: str) -> Any:
        if name in BESIDE_THE_CONTRACT:  # not offered: retrieval's protocol check says so
            raise AttributeError(name)
        # any write or unrelated call is a test failure: recall must only read
        raise AssertionError(f"recall called store.{name}, which it must not")


__all__ = ["OPEN", "FakeStore", "mem", "view_at"]


def stored_memory(scope: Scope, i: int, text: str, t: int) -> Memory:
    """A memory as a store test inserts it: id counting down from m9999 (so later rows sort
    first by id), created and valid from ``t``, in the scope's namespace (default "n")."""
    return Memory(
        id=f"m{9999 - i:04d}",
        tenant=scope.tenant,
        namespace=scope.namespace or "n",
        content=text,
        valid_from=from_us(t),
        t_created=from_us(t),
        provenance=Provenance(agent_id="a", role="planner"),
        content_hash=content_hash(text),
    )
