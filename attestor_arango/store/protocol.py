"""The Store protocol: tenant-scoped primitives, nothing more.

Backends store, filter and return candidates with raw signals (cosine, BM25,
hop distance); they never rank. Every method takes a ``Scope`` first; ``Scope``
cannot be built without a tenant, so a call without one fails before any I/O.
Every row a backend returns must be checked with ``check_tenant`` (the third
lock of the tenant-filter layer).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from attestor_arango.errors import TenantLeakError, TenantRequiredError, ValidationError
from attestor_arango.models import AuditEntry, Entity, Episode, Memory, Relation
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.hits import Hit as Hit  # (re-exported)
from attestor_arango.text.entity_names import EntityNames


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Optional equality filters for ``list_memories``; None means "any"."""

    entity: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None  # any of these tags
    status: str | None = None  # status as seen at the view's as_of
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class TextHit:
    """A text-lane row before it is chosen: just what BM25 re-scoring reads.

    The lane asks for a generous pool (200 rows) and keeps a quarter of it after
    re-scoring; decoding whole memories for the rest was most of its cost.
    """

    id: str
    content: str
    t_created: int  # microseconds
    score: float


class TextScore(NamedTuple):
    """A text-pool row after re-scoring, when its text was never read (what the lane keeps
    of a row: its memory is read by id, lane completion takes the score)."""

    id: str
    t_created: int  # microseconds
    score: float


class PoolScores(NamedTuple):
    """A text pool scored by BM25 over the pool alone, by a backend that can (beside the
    contract: retrieval's ``ScoresPool``): the rows holding a query term, in any order (the
    scores do not depend on it; the lane orders them)."""

    ids: list[str]
    t_created: np.ndarray  # int64 microseconds
    scores: np.ndarray  # float64, before rounding
    terms: dict[str, tuple[str, ...]]  # the scoring terms of those rows it read, by id


@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    name: str
    dimension: int


class StoreLifecycle(Protocol):
    """What every backend is: a name, a health report, transactions, and a close."""

    backend: str

    def close(self) -> None: ...
    def health(self) -> dict[str, Any]: ...
    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all; nesting joins the outer one."""
        ...


VectorBatch = Mapping[str, np.ndarray]  # memory id -> new vector: one step of a re-embedding


class MemoryStore(Protocol):
    """Memories and their vectors: insert once, close once, read by id, filter, count."""

    def get_embedding_space(self, scope: Scope) -> EmbeddingSpace | None: ...
    def set_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> None: ...
    def hold_embedding_space(self, scope: Scope, space: EmbeddingSpace) -> bool:
        """Whether ``space`` is the tenant's recorded embedding space, kept so until the
        enclosing transaction ends: a write calls it in its transaction for the space it
        embedded with, so a re-embedding's switch cannot commit between the write's check
        and its commit (the late writer whose old-space vector would land after the
        switch). The embedded store's write lock serialises the two; ArangoDB rewrites the
        space record, so one of two overlapping transactions fails with ``ConflictError``
        and changes nothing. False (nothing held) when another space, or none, is recorded."""
        ...

    def replace_vectors(
        self, scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]
    ) -> int:
        """Re-embedding's swap, atomic for readers: every memory of the tenant that has a
        vector gets its new vector from ``batches`` and the tenant's space becomes
        ``space``; no read sees some vectors of each space (one transaction in the embedded
        store; bounded steps around one switch on ArangoDB, store/arango/vectors.py).
        Nothing else in any row changes. ``batches`` is consumed once, one batch at a time,
        and no batch is kept past its own writing, so the swap holds one batch of vectors,
        never the tenant's (a 1M-memory tenant's 384-d vectors are ~1.5 GB). Each id
        appears in one batch at most. ``ConflictError`` (and nothing a reader sees changed)
        unless the batches cover exactly the tenant's vector-bearing memories, once each;
        ``ValidationError`` (likewise) for a vector that does not fit ``space``. Returns how
        many it replaced."""
        ...

    def insert_memory(self, scope: Scope, memory: Memory, vector: np.ndarray | None) -> None: ...
    def get_memory(self, scope: Scope, memory_id: str) -> Memory | None:
        """By id within the tenant (and namespace when the scope has one); no view applied."""
        ...

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> dict[str, Memory]: ...
    def memory_ids_matching(
        self, scope: Scope, fragment: str, limit: int, created_by: int | None = None
    ) -> list[str]:
        """Ids in the scope that start or end with ``fragment`` (lowercase hex and '-'),
        sorted, at most ``limit``: how a short id a person copied is found again. With
        ``created_by`` (microseconds) only rows created by then: a replay resolves a short
        id against what existed at its ``as_of``."""
        ...

    def get_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]: ...
    def close_memory(
        self, scope: Scope, memory_id: str, t_expired: int, status: str, superseded_by: str | None
    ) -> None:
        """Set the transaction-time end once; ConflictError if already closed.

        Relations derived from the memory (``relation.memory_id``) are closed at the
        same instant, in the same atomic step: a superseded fact's triples must not
        outlive it in the current view, and stay visible to replays before the close.
        """
        ...

    def find_active(
        self, scope: Scope, entity: str, category: str, view: TemporalView
    ) -> list[Memory]: ...
    def list_memories(
        self, scope: Scope, filters: MemoryFilter, view: TemporalView, limit: int, offset: int = 0
    ) -> list[Memory]:
        """Ordered by t_created ascending, id ascending."""
        ...

    def count_memories(self, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
        """How many rows ``list_memories`` pages through with the same filters and view."""
        ...

    def latest_in_session(
        self,
        scope: Scope,
        session_id: str,
        tag: str,
        view: TemporalView,
        before: int,
        limit: int,
        offset: int = 0,
    ) -> list[Memory]:
        """Memories of session ``session_id`` tagged ``tag`` seen by ``view`` at the latest
        ``valid_from`` below ``before``, newest first, paged, read by index (``add_turns``)."""
        ...

    def count_rows(self, scope: Scope) -> dict[str, int]:
        """Keys: total, active, superseded, archived (memories), episodes, entities,
        relations, audit (the tenant's audit entries written by calls made in the scope's
        namespace, all of them without one: a namespace's figures tell nothing of another)."""
        ...


class LaneStore(Protocol):
    """The candidate lanes: raw cosine and BM25 signals within a scope and a view."""

    def vector_candidates(
        self,
        scope: Scope,
        vector: np.ndarray,
        k: int,
        view: TemporalView,
        prefilter: int = 0,
        prefilter_rows: int = 0,
    ) -> list[Hit]:
        """The ``k`` visible memories nearest ``vector``; ``prefilter`` > 0 lets a store score
        only that many rows it finds near first when at least ``prefilter_rows`` rows are
        visible (approximate; a store without such a stage ignores both)."""
        ...

    def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        """The ``k`` best BM25 matches of ``query`` the view sees, as light rows (no memory
        decoded: the pipeline re-scores the pool and reads whole rows only for those it
        keeps), score descending; empty when the query has no word to match."""
        ...


@dataclass(frozen=True, slots=True)
class KnownEntities:
    """A scope's entities with their names' index (text/entity_names.py), recall reads."""

    entities: tuple[Entity, ...]
    names: EntityNames

    @classmethod
    def of(cls, entities: Iterable[Entity]) -> KnownEntities:
        """The entities and their index: every name, key and alias names its entity."""
        held = tuple(entities)
        return cls(held, EntityNames((e.key, (e.name, e.key, *e.aliases)) for e in held))


@dataclass(frozen=True, slots=True)
class BackedRelations:
    """What recall's graph step reads of the relations touching the entities a query names
    (``GraphStore.relations_backed``): only relations whose backing memory, when they name
    one, the view sees, so a fact superseded or forgotten leaves no relation behind.

    ``relations``: the newest usable ones (t_created desc, id asc; a relation whose backing
    memory is a candidate already is not usable: the memory is the better evidence), at
    most the limit asked. ``ends``: the asked keys that are an end of any such relation,
    candidate-backed ones included (the keys the view can see through the graph).
    """

    relations: tuple[Relation, ...]
    ends: frozenset[str]


class GraphStore(Protocol):
    """Entities and typed relations, and hop distances between entities."""

    def upsert_entity(self, scope: Scope, entity: Entity) -> None: ...
    def list_entities(self, scope: Scope) -> list[Entity]: ...
    def known_entities(self, scope: Scope) -> KnownEntities:
        """``list_entities`` with its name index; a backend may keep it between calls
        until the scope's entities change (every recall reads it)."""
        ...

    def add_relation(self, scope: Scope, relation: Relation) -> None: ...
    def relations_touching(
        self, scope: Scope, entity_keys: Sequence[str], view: TemporalView
    ) -> list[Relation]: ...
    def relations_backed(
        self,
        scope: Scope,
        entity_keys: Sequence[str],
        view: TemporalView,
        candidates: Sequence[str],
        limit: int,
    ) -> BackedRelations:
        """The relations touching ``entity_keys`` visible in ``view`` whose backing memory
        (if they name one) is among ``candidates`` or visible in the view within the scope,
        read by one query (a hub entity touches hundreds): the newest ``limit`` of those not
        backed by a candidate, and the keys any of them ends on (``BackedRelations``).
        ``ValidationError`` for a ``limit`` that is not a non-negative integer."""
        ...

    def hops(
        self, scope: Scope, sources: Sequence[str], max_depth: int, view: TemporalView
    ) -> dict[str, int]:
        """Entity key -> BFS depth from the nearest source (sources are depth 0)."""
        ...


class EpisodeStore(Protocol):
    """Verbatim conversation rounds, the evidence ingest decisions cite."""

    def put_episode(self, scope: Scope, episode: Episode) -> None: ...
    def get_episode(self, scope: Scope, episode_id: str) -> Episode | None: ...
    def list_episodes(
        self, scope: Scope, limit: int, offset: int = 0, *, newest_first: bool = False
    ) -> list[Episode]: ...  # by t_created, id (descending newest_first: consolidate, reflect)


class AuditStore(Protocol):
    """The tenant's append-only audit chain and its forward-only head."""

    def last_audit(self, scope: Scope) -> AuditEntry | None: ...
    def append_audit(self, scope: Scope, entry: AuditEntry) -> None: ...
    def read_audit(self, scope: Scope, limit: int, after_seq: int = 0) -> list[AuditEntry]: ...

    def read_audit_actions(
        self, scope: Scope, actions: Sequence[str], limit: int
    ) -> list[AuditEntry]:
        """The newest ``limit`` entries whose action is one of ``actions``, newest first
        (the deletion trail, read without walking the whole chain)."""
        ...

    def audit_head(self, scope: Scope) -> tuple[int, str] | None:
        """(seq, hash) of the newest audit entry ever appended for the tenant, kept apart
        from the entries and only moving forward, so a truncated chain is detectable."""
        ...


class GovernanceStore(Protocol):
    """Quotas, and erasure step by step (purge, retention deletes, compaction)."""

    def get_quota(self, scope: Scope) -> int | None: ...
    def set_quota(self, scope: Scope, daily_writes: int | None) -> None: ...
    def count_writes(self, scope: Scope, day: str) -> int: ...
    def add_writes(self, scope: Scope, day: str, n: int) -> int: ...
    def get_recall_key(self, scope: Scope) -> str | None:
        """The tenant's recall-id key (hex, ``core/recall_key.py``); None when none is kept."""
        ...

    def put_recall_key(self, scope: Scope, key: str) -> str | None:
        """Keeps ``key`` unless the tenant has one; the key kept. None when the store
        refuses writes (a read-only file or user); other failures raise ``StoreError``."""
        ...

    def purge_tenant(self, scope: Scope) -> dict[str, int]:
        """Removes every row of the tenant except its audit chain; per-collection counts."""
        ...

    def purge_collections(self) -> tuple[str, ...]:
        """Names ``purge_collection`` accepts, in safe removal order (never the audit chain)."""
        ...

    def purge_collection(self, scope: Scope, collection: str) -> int:
        """Deletes every row of the tenant in one collection, caches of it included.

        Idempotent (a re-run returns 0); returns how many rows it removed. Commits on its
        own (joins an enclosing ``transaction()``); caches are dropped when that commits.
        """
        ...

    def tenant_residue(self, scope: Scope) -> dict[str, int]:
        """Rows the tenant still holds per collection of ``purge_collections()``, plus any
        index or cache entries the backend keeps for it, under names of the backend's own;
        the audit chain is not counted. Every value is zero after a complete purge."""
        ...

    def delete_memories(self, scope: Scope, ids: Sequence[str]) -> int:
        """Hard-deletes memories with their vectors, text-index entries, cached vectors and
        the relations derived from them (retention delete, compaction); returns rows removed."""
        ...


@runtime_checkable
class Store(
    StoreLifecycle,
    MemoryStore,
    LaneStore,
    GraphStore,
    EpisodeStore,
    AuditStore,
    GovernanceStore,
    Protocol,
):
    """A whole backend: every role above. Services that need one role may ask for it alone."""


def require_scope(scope: object, method: str) -> Scope:
    """``scope`` itself when it is a ``Scope``; ``TenantRequiredError`` otherwise.

    A tenant name as a string, a dict, an ``AgentContext`` or None must not reach a
    backend: duck typing would let some of them through (an object with a ``tenant``
    attribute) and fail deep inside for the rest, so the store boundary checks the type.
    """
    if not isinstance(scope, Scope):
        raise TenantRequiredError(
            f"store call {method} needs a Scope (tenant, namespace); "
            f"got {type(scope).__name__}: every store call is scoped to a tenant",
            field="scope",
        )
    return scope


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(self: Any, scope: Any, *args: Any, **kwargs: Any) -> Any:
        require_scope(scope, name)
        return fn(self, scope, *args, **kwargs)

    return call


class ScopeGuarded:
    """Base of every backend: each public method whose first argument is ``scope`` refuses
    anything but a ``Scope`` with ``TenantRequiredError`` before it runs (fail closed at the
    store boundary, one check for all of them, subclasses included)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, value in list(vars(cls).items()):
            if name.startswith("_") or not inspect.isfunction(value):
                continue
            params = list(inspect.signature(value).parameters)
            if len(params) >= 2 and params[1] == "scope":
                setattr(cls, name, _guarded(name, value))


def pool_of(hits: Sequence[Hit]) -> list[TextHit]:
    """Decoded hits as text-pool rows (for a backend whose query returns whole rows anyway)."""
    return [TextHit(h.memory.id, h.memory.content, h.memory.us("t_created"), h.score) for h in hits]


def check_tenant(scope: Scope, rows: Sequence[Any]) -> None:
    """Raises if any returned row belongs to another tenant or namespace."""
    for row in rows:
        tenant = row.tenant if not isinstance(row, dict) else row.get("tenant")
        if tenant != scope.tenant:
            raise TenantLeakError(
                f"backend returned a row of tenant {tenant!r} to a call scoped to {scope.tenant!r}",
            )
        if scope.namespace is not None:
            ns = row.namespace if not isinstance(row, dict) else row.get("namespace")
            if ns is not None and ns != scope.namespace:
                raise TenantLeakError(
                    f"backend returned a row of namespace {ns!r} to a call scoped to "
                    f"{scope.namespace!r}",
                )


def check_relation_limit(limit: object) -> int:
    """``limit`` of ``relations_backed`` when it is a non-negative integer (a bool is not
    one); ``ValidationError`` otherwise, before any backend reads."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValidationError(f"relation limit must be a non-negative integer; got {limit!r}")
    return limit


def iter_chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in slices of at most ``size`` (for backends that bound a request's size)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
