"""Memory <-> plain document mapping, and the vector checks, shared by both backends.

Documents hold times as integer microseconds with OPEN for open intervals,
lists and dicts as native values; each backend only adds its own encoding
(JSON text in SQLite, native JSON in ArangoDB). A vector is stored and compared
as float32 of the tenant's dimension; both backends refuse one of another shape
with the same words (``stored_vector``, ``query_vector``, ``replacement_vector``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN, from_us, to_us
from attestor_arango.errors import ConflictError, ValidationError
from attestor_arango.memo import Memo
from attestor_arango.models import (
    AuditEntry,
    Entity,
    Episode,
    Memory,
    MemoryStatus,
    Provenance,
    Relation,
    trusted,
    us_or_none,
)
from attestor_arango.store.protocol import EmbeddingSpace, VectorBatch


def _float32(vector: Any) -> np.ndarray:
    return np.asarray(vector, dtype=np.float32)


def stored_vector(vector: Any, space: EmbeddingSpace | None) -> np.ndarray:
    """A memory's vector as float32; ValidationError unless it fits the tenant's space."""
    arr = _float32(vector)
    if space is None or arr.shape != (space.dimension,):
        raise ValidationError(
            f"vector of shape {arr.shape} does not fit the tenant's embedding space "
            f"{space}; embed with the tenant's embedder",
        )
    return arr


def query_vector(vector: Any, dimension: int) -> np.ndarray:
    """A query vector as float32; ValidationError unless it has the tenant's dimension."""
    arr = _float32(vector)
    if arr.shape != (dimension,):
        raise ValidationError(
            f"query vector has shape {arr.shape}, the tenant's space has dimension {dimension}",
        )
    return arr


def row_norms(rows: np.ndarray) -> np.ndarray:
    """Each stored (float32) vector's norm in float64, as exact cosine takes it: the rows
    widened (each float32 exactly), squared and summed along the row (elementwise, then
    summed: a row's norm does not depend on the other rows beside it), the square root."""
    wide = rows.astype(np.float64)
    return np.sqrt((wide * wide).sum(axis=1))


def vector_norm(x: np.ndarray) -> float:
    """``float(np.linalg.norm(x))`` of a float64 vector, the same float: the square root of
    ``x.dot(x)``, ``x`` raveled as it ravels it, without its checks (a few calls a recall,
    each several times the arithmetic)."""
    flat = x.ravel(order="K")
    return math.sqrt(flat.dot(flat))


def replacement_vector(memory_id: str, vector: Any, space: EmbeddingSpace) -> np.ndarray:
    """A re-embedded memory's vector as float32; ValidationError unless it fits ``space``."""
    arr = _float32(vector)
    if arr.shape != (space.dimension,):
        raise ValidationError(
            f"vector for {memory_id} has shape {arr.shape}, the new space "
            f"{space.name} has dimension {space.dimension}"
        )
    return arr


def replacement_batches(
    batches: Iterable[VectorBatch], space: EmbeddingSpace
) -> Iterator[dict[str, np.ndarray]]:
    """``Store.replace_vectors``'s batches, one at a time, each vector checked
    (``replacement_vector``). Keeps the ids seen (not their vectors): an id in a second
    batch is a ``ConflictError``, since the swap's count check would pass while another row
    kept its old vector. Raises ``ValidationError`` for a vector that does not fit."""
    seen: set[str] = set()
    for batch in batches:
        checked = {}
        for memory_id, vector in batch.items():
            if memory_id in seen:
                raise ConflictError(f"memory {memory_id} was given twice to re-embed")
            seen.add(memory_id)
            checked[memory_id] = replacement_vector(memory_id, vector, space)
        yield checked


def _us(value: Any) -> int:
    return OPEN if value is None else to_us(value)


def memory_to_doc(m: Memory) -> dict[str, Any]:
    p = m.provenance
    return {
        "id": m.id,
        "tenant": m.tenant,
        "namespace": m.namespace,
        "content": m.content,
        "entity": m.entity,
        "category": m.category,
        "tags": list(m.tags),
        "confidence": m.confidence,
        "valid_from": to_us(m.valid_from),
        "valid_until": _us(m.valid_until),
        "t_created": to_us(m.t_created),
        "t_expired": _us(m.t_expired),
        "superseded_by": m.superseded_by,
        "supersedes": m.supersedes,
        "status": m.status.value,
        "agent_id": p.agent_id,
        "role": p.role,
        "session_id": p.session_id,
        "source_episode_id": p.source_episode_id,
        "agent_trail": list(p.agent_trail),
        "parent_agent_id": p.parent_agent_id,
        "content_hash": m.content_hash,
        "signature": m.signature,
        "metadata": m.metadata,
        "salt": m.salt,
    }


_STATUS = {s.value: s for s in MemoryStatus}


def _make_provenance(key: tuple[Any, ...]) -> Provenance:
    agent_id, role, session_id, source_episode_id, agent_trail, parent_agent_id = key
    return trusted(
        Provenance,
        {
            "agent_id": agent_id,
            "role": role,
            "session_id": session_id,
            "source_episode_id": source_episode_id,
            "agent_trail": agent_trail,
            "parent_agent_id": parent_agent_id,
        },
    )


# (agent_id, role, session_id, source_episode_id, agent_trail, parent_agent_id) -> one
# frozen Provenance of those values: most rows of a store share a few (a memo, so an
# erasure's forget_all empties it too)
provenance_of: Memo[tuple[Any, ...], Provenance] = Memo(_make_provenance, 4096)


def _provenance(d: dict[str, Any]) -> Provenance:
    """The row's provenance; rows with the same values share one frozen instance."""
    return provenance_of(
        (
            d["agent_id"],
            d["role"],
            d.get("session_id"),
            d.get("source_episode_id"),
            tuple(d.get("agent_trail") or ()),
            d.get("parent_agent_id"),
        )
    )


def memory_from_doc(d: dict[str, Any]) -> Memory:
    """A stored document as a ``Memory``, built without re-running validation (``memory_of``)."""
    return memory_of(
        d["id"],
        d["tenant"],
        d["namespace"],
        d["content"],
        d.get("entity"),
        d.get("category"),
        tuple(d.get("tags") or ()),
        d.get("confidence", 1.0),
        d["valid_from"],
        d["valid_until"],
        d["t_created"],
        d["t_expired"],
        d.get("superseded_by"),
        d.get("supersedes"),
        d.get("status", "active"),
        _provenance(d),
        d["content_hash"],
        d.get("signature"),
        dict(d.get("metadata") or {}),
        d.get("salt"),
    )


def memory_of(
    memory_id: str,
    tenant: str,
    namespace: str,
    content: str,
    entity: str | None,
    category: str | None,
    tags: tuple[str, ...],
    confidence: Any,
    valid_from: Any,
    valid_until: Any,
    t_created: Any,
    t_expired: Any,
    superseded_by: str | None,
    supersedes: str | None,
    status: Any,
    provenance: Provenance,
    content_hash: str,
    signature: str | None,
    metadata: dict[str, Any],
    salt: str | None = None,
) -> Memory:
    """A stored memory's fields (times in microseconds, OPEN for an open bound) as a
    ``Memory``, built without re-running validation: the one conversion every reader of
    stored rows goes through (``memory_from_doc``; the embedded store's rows, positionally).

    Every row was validated when it was written, and recall decodes about a hundred
    rows per query, so the read path converts each field to exactly the type
    validation would produce (floats, the status enum, aware datetimes) and constructs
    the frozen model directly: the same object, field for field. Immutable parts are
    shared: one Provenance per distinct set of values (``provenance_of``), and one
    datetime for ``valid_from`` when it is ``t_created`` (as for most rows).
    """
    created_us = int(t_created)
    valid_us = int(valid_from)
    created = from_us(created_us)
    return trusted(
        Memory,
        {
            "id": memory_id,
            "tenant": tenant,
            "namespace": namespace,
            "content": content,
            "entity": entity,
            "category": category,
            "tags": tags,
            "confidence": float(confidence),
            "valid_from": created if valid_us == created_us else from_us(valid_us),
            "valid_until": us_or_none(int(valid_until)),
            "t_created": created,
            "t_expired": us_or_none(int(t_expired)),
            "superseded_by": superseded_by,
            "supersedes": supersedes,
            "status": _STATUS.get(status) or MemoryStatus(status),
            "provenance": provenance,
            "content_hash": content_hash,
            "signature": signature,
            "metadata": metadata,
            "salt": salt,
        },
    )


def episode_to_doc(e: Episode) -> dict[str, Any]:
    return {
        "id": e.id,
        "tenant": e.tenant,
        "namespace": e.namespace,
        "session_id": e.session_id,
        "agent_id": e.agent_id,
        "user_text": e.user_text,
        "assistant_text": e.assistant_text,
        "user_time": to_us(e.user_time),
        "assistant_time": _us(e.assistant_time),
        "t_created": to_us(e.t_created),
        "metadata": e.metadata,
        "salt": e.salt,
    }


def episode_from_doc(d: dict[str, Any]) -> Episode:
    return Episode(
        id=d["id"],
        tenant=d["tenant"],
        namespace=d["namespace"],
        session_id=d.get("session_id"),
        agent_id=d["agent_id"],
        user_text=d.get("user_text") or "",
        assistant_text=d.get("assistant_text") or "",
        user_time=from_us(int(d["user_time"])),
        assistant_time=us_or_none(int(d["assistant_time"])),
        t_created=from_us(int(d["t_created"])),
        metadata=dict(d.get("metadata") or {}),
        salt=d.get("salt"),
    )


def audit_to_doc(a: AuditEntry) -> dict[str, Any]:
    return {
        "tenant": a.tenant,
        "seq": a.seq,
        "id": a.id,
        "ts": to_us(a.ts),
        "agent_id": a.agent_id,
        "role": a.role,
        "action": a.action,
        "target": a.target,
        "details": a.details,
        "prev_hash": a.prev_hash,
        "hash": a.hash,
        "signature": a.signature,
    }


def audit_from_doc(d: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        tenant=d["tenant"],
        seq=int(d["seq"]),
        id=d["id"],
        ts=from_us(int(d["ts"])),
        agent_id=d["agent_id"],
        role=d["role"],
        action=d["action"],
        target=d.get("target"),
        details=dict(d.get("details") or {}),
        prev_hash=d["prev_hash"],
        hash=d["hash"],
        signature=d.get("signature"),
    )


def entity_to_doc(e: Entity) -> dict[str, Any]:
    return {
        "tenant": e.tenant,
        "namespace": e.namespace,
        "key": e.key,
        "name": e.name,
        "kind": e.kind,
        "aliases": list(e.aliases),
    }


def entity_from_doc(d: dict[str, Any]) -> Entity:
    return Entity(
        tenant=d["tenant"],
        namespace=d["namespace"],
        key=d["key"],
        name=d["name"],
        kind=d.get("kind"),
        aliases=tuple(d.get("aliases") or ()),
    )


def relation_to_doc(r: Relation) -> dict[str, Any]:
    return {
        "id": r.id,
        "tenant": r.tenant,
        "namespace": r.namespace,
        "source": r.source,
        "relation": r.relation,
        "target": r.target,
        "memory_id": r.memory_id,
        "t_created": to_us(r.t_created),
        "t_expired": _us(r.t_expired),
        "properties": r.properties,
    }


def relation_from_doc(d: dict[str, Any]) -> Relation:
    return Relation(
        id=d["id"],
        tenant=d["tenant"],
        namespace=d["namespace"],
        source=d["source"],
        relation=d["relation"],
        target=d["target"],
        memory_id=d.get("memory_id"),
        t_created=from_us(int(d["t_created"])),
        t_expired=us_or_none(int(d["t_expired"])),
        properties=dict(d.get("properties") or {}),
    )
