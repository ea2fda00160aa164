"""Graph affinity and typed-relation candidates.

Affinity: a candidate whose entity is close (in hops) to an entity the query
names is more likely on topic. Applied only when the query names entities; a
memory without an entity is not a graph node and gets no bonus either way.

Relations touching the query entities join as synthetic candidates ("Alice
works_at Acme"), with ids derived from the relation id so that the same store
state always yields the same ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from attestor_arango.clock import to_us
from attestor_arango.models import Entity, Memory, Provenance, Relation, content_hash
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.scope import Scope
from attestor_arango.validation import entity_key

SYNTHETIC_PREFIX = "rel:"


def apply_affinity(
    cands: Sequence[Candidate], hops: Mapping[str, int], config: RetrievalConfig
) -> None:
    """Annotates each candidate with its hop distance and bonus (in place)."""
    for cand in cands:
        if cand.synthetic or cand.memory.entity is None:
            continue
        depth = hops.get(entity_key(cand.memory.entity))
        if depth is not None and depth > config.graph_max_depth:
            depth = None
        cand.graph_hops = depth
        cand.graph_bonus = config.hop_bonus(depth)
        cand.compute_relevance()


def synthetic_id(relation_id: str) -> str:
    return SYNTHETIC_PREFIX + hashlib.sha256(relation_id.encode("utf-8")).hexdigest()[:32]


def relation_text(rel: Relation, names: Mapping[str, str]) -> str:
    verb = rel.relation.replace("_", " ")
    return f"{names.get(rel.source, rel.source)} {verb} {names.get(rel.target, rel.target)}"


def relation_candidates(
    scope: Scope,
    relations: Sequence[Relation],
    entities: Sequence[Entity],
    query_keys: Sequence[str],
    existing_ids: set[str],
    config: RetrievalConfig,
) -> list[Candidate]:
    """Synthetic candidates for relations touching the query entities.

    A relation whose backing memory is already a candidate is skipped: the
    memory itself is the better evidence. Relations are taken in a stable order
    (t_created desc, id asc) up to ``relation_limit``.
    """
    names = {e.key: e.name for e in entities}
    keys = set(query_keys)
    ordered = sorted(relations, key=lambda r: (-to_us(r.t_created), r.id))
    out: list[Candidate] = []
    seen: set[str] = set()
    for rel in ordered:
        if rel.memory_id is not None and rel.memory_id in existing_ids:
            continue
        if rel.source not in keys and rel.target not in keys:
            continue
        sid = synthetic_id(rel.id)
        if sid in seen:
            continue
        seen.add(sid)
        text = relation_text(rel, names)
        memory = Memory(
            id=sid,
            tenant=rel.tenant,
            namespace=rel.namespace if scope.namespace is None else scope.namespace,
            content=text,
            entity=names.get(rel.source, rel.source),
            category="relation",
            valid_from=rel.t_created,
            t_created=rel.t_created,
            provenance=Provenance(agent_id="graph", role="system"),
            content_hash=content_hash(text),
            metadata={"relation_id": rel.id, "relation": rel.relation, "memory_id": rel.memory_id},
        )
        cand = Candidate(memory=memory, synthetic=True, graph_hops=0)
        cand.rrf_norm = config.relation_base
        cand.graph_bonus = config.hop_bonus(0)
        cand.compute_relevance()
        out.append(cand)
        if len(out) >= config.relation_limit:
            break
    return out
