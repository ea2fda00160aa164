"""Model <-> ArangoDB document mapping, on top of the shared ``store.rows`` mapping.

What ArangoDB adds to the shared plain documents:

- no ``_key`` is ever sent: collections may be sharded by ``tenant`` and a cluster refuses
  user keys under custom shard keys (error 1466), so every row is addressed by the unique
  ``(tenant, id)`` index and the server generates ``_key``;
- system attributes (``_key``, ``_id``, ``_rev``, ``_from``, ``_to``) and our query-side
  extras (``vector``, ``lane_score``) are dropped on the way back, so models never depend on
  server-generated values;
- the memory's embedding lives in the same document as ``vector`` (a list of doubles), the
  attribute the vector index covers; a re-embedding stages the new one beside it in
  ``vector_next`` (``store/arango/vectors.py``). Queries that return memory documents unset
  both (``VECTOR_ATTRIBUTES``; a lint in tests/support/aql_lints.py checks every query).

Times stay integer microseconds with ``OPEN`` for open bounds: every value below 2**53 (and
``OPEN`` itself, 253402300799 * 10**6) is exactly representable as a double, so AQL and
ArangoSearch comparisons agree with Python's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attestor_arango.errors import ValidationError
from attestor_arango.models import AuditEntry, Entity, Episode, Memory, Relation
from attestor_arango.store.codec import (
    audit_from_doc,
    audit_to_doc,
    entity_from_doc,
    entity_to_doc,
    episode_from_doc,
    episode_to_doc,
    memory_from_doc,
    memory_to_doc,
    relation_from_doc,
    relation_to_doc,
)
from attestor_arango.store.protocol import Hit

SYSTEM_ATTRIBUTES = ("_key", "_id", "_rev", "_from", "_to")
VECTOR_ATTRIBUTES = ("vector", "vector_next")
QUERY_EXTRAS = (*VECTOR_ATTRIBUTES, "lane_score")


def _clean(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in SYSTEM_ATTRIBUTES and k not in QUERY_EXTRAS}


def _no_key(doc: dict[str, Any]) -> dict[str, Any]:
    for attr in SYSTEM_ATTRIBUTES:
        doc.pop(attr, None)
    return doc


def vector_to_list(vector: np.ndarray) -> list[float]:
    """A 1-D finite vector as a JSON list of doubles (float32 widened exactly)."""
    arr = np.asarray(vector)
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(f"a vector must be 1-D and non-empty; got shape {arr.shape}")
    values = [float(x) for x in arr.astype(np.float64)]
    if not all(math.isfinite(x) for x in values):
        raise ValidationError("a vector must hold finite numbers only (no NaN or infinity)")
    return values


def memory_to_arango(memory: Memory, vector: np.ndarray | None) -> dict[str, Any]:
    doc = _no_key(memory_to_doc(memory))
    if vector is not None:
        doc["vector"] = vector_to_list(vector)
    return doc


def memory_from_arango(doc: dict[str, Any]) -> Memory:
    return memory_from_doc(_clean(doc))


def hit_from_arango(doc: dict[str, Any]) -> Hit:
    score = doc.get("lane_score")
    if score is None:
        raise ValidationError("a candidate row came back without its lane_score")
    return Hit(memory=memory_from_arango(doc), score=float(score))


def vector_from_arango(doc: dict[str, Any]) -> np.ndarray:
    return np.asarray(doc["vector"], dtype=np.float32)


def episode_to_arango(episode: Episode) -> dict[str, Any]:
    return _no_key(episode_to_doc(episode))


def episode_from_arango(doc: dict[str, Any]) -> Episode:
    return episode_from_doc(_clean(doc))


def audit_to_arango(entry: AuditEntry) -> dict[str, Any]:
    return _no_key(audit_to_doc(entry))


def audit_from_arango(doc: dict[str, Any]) -> AuditEntry:
    return audit_from_doc(_clean(doc))


def entity_to_arango(entity: Entity) -> dict[str, Any]:
    return _no_key(entity_to_doc(entity))


def entity_from_arango(doc: dict[str, Any]) -> Entity:
    return entity_from_doc(_clean(doc))


def relation_to_arango(relation: Relation) -> dict[str, Any]:
    """Edge body without ``_from``/``_to``: the query aims it at the entity vertices."""
    return _no_key(relation_to_doc(relation))


def relation_from_arango(doc: dict[str, Any]) -> Relation:
    return relation_from_doc(_clean(doc))
