"""Applying a round's decisions: one transaction, through AgentMemory's write path.

Every write goes through ``Writer.write`` (permission, quota,
per-agent write limit, embedding, signing, entity upsert, supersession, audit)
so ingest can never be a side door. The graph gets the fact's entities and
typed relations, and a ``supersedes`` edge from a new value to the one it
replaced. Within one round a later fact on the same single-valued attribute
supersedes the earlier one ("I live in Paris. Actually, I just moved to Berlin").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.ingest.model import Action, Decision, Fact
from attestor_arango.ingest.resolve import known
from attestor_arango.ingest.text import value_key
from attestor_arango.models import Entity, Episode, Memory, Relation
from attestor_arango.validation import entity_key


def _metadata(d: Decision) -> dict[str, Any]:
    info = d.fact.describe()
    info.update(
        decision=d.action.value,
        evidence_episode_id=d.evidence_episode_id,
        decided_by=d.decided_by,
        reason=d.reason,
        target_id=d.target_id,
    )
    return {"ingest": info}


def _graph(rt: Runtime, ctx: AgentContext, memory: Memory, fact: Fact,
           old: Memory | None) -> None:  # fmt: skip
    scope = ctx.scope
    namespace = scope.require_namespace()
    edges = list(fact.relations)
    if old is not None:
        old_value = known(old).value
        if old_value and fact.value and value_key(old_value) != value_key(fact.value):
            edges.append((fact.value, "supersedes", old_value))
    names = dict.fromkeys([*fact.entities, *(e for s, _, t in edges for e in (s, t))])
    for name in names:
        key = entity_key(name)
        if key:
            kind = (
                "person"
                if name == fact.owner or (fact.speaker == "user" and name == fact.subject)
                else None
            )
            rt.store.upsert_entity(
                scope,
                Entity(tenant=scope.tenant, namespace=namespace, key=key, name=name, kind=kind),
            )
    for source, relation, target in dict.fromkeys(edges):
        if not entity_key(source) or not entity_key(target):
            continue
        now = rt.clock.now_us()
        rt.store.add_relation(
            scope,
            Relation(
                id=rt.ids.new_id(now),
                tenant=scope.tenant,
                namespace=namespace,
                source=entity_key(source),
                relation=relation,
                target=entity_key(target),
                memory_id=memory.id,
                t_created=memory.t_created,
                properties={"evidence_episode_id": memory.provenance.source_episode_id},
            ),
        )


def apply_decisions(
    rt: Runtime,
    auditor: Auditor,
    writer: Writer,
    ctx: AgentContext,
    episode: Episode,
    decisions: list[Decision],
) -> tuple[list[Decision], list[Memory], list[str]]:
    """Writes the round atomically; returns the decisions as applied, memories and warnings."""
    scope = ctx.scope
    applied: list[Decision] = []
    salts: list[str | None] = []  # per applied decision: the salt keying its fact's digest
    written: list[Memory] = []
    warnings: list[str] = []
    by_attribute: dict[tuple[str, str, str], tuple[Memory, Fact]] = {}
    closed: dict[str, str] = {}  # old id -> id of the memory that closed it in this round
    # one transaction; a round refused part-way gives back the writes it counted against
    # the agent's limit (Writer.together), when consolidate() applies it as when ingest does
    with writer.together(ctx):
        for d in decisions:
            fact = d.fact
            key = (fact.owner or fact.speaker, entity_key(fact.subject), fact.attribute or "")
            earlier = by_attribute.get(key) if fact.attribute else None
            if d.target_id in closed:
                d = replace(d, target_id=closed[d.target_id])
            if (
                earlier is not None
                and fact.single_valued
                and value_key(earlier[1].value or "") != value_key(fact.value or "")
                and d.action is not Action.NOOP
            ):
                d = replace(d, action=Action.INVALIDATE, target_id=earlier[0].id,
                            reason=f"later in the same round: {d.reason}")  # fmt: skip
            if d.action is Action.NOOP:
                same = None if d.target_id is None else rt.store.get_memory(scope, d.target_id)
                applied.append(d)
                salts.append(None if same is None else same.salt)
                continue
            old = None
            if d.target_id is not None and d.action in (Action.UPDATE, Action.INVALIDATE):
                old = rt.store.get_memory(scope, d.target_id)
                if old is None or not old.is_active:
                    warnings.append(
                        f"{d.action.value} target {d.target_id} is no longer active; added instead"
                    )
                    d = replace(d, action=Action.ADD, target_id=None)
                    old = None
            memory = writer.write(
                ctx,
                content=fact.text,
                entity=fact.entity,
                category=fact.category,
                tags=("ingest", f"speaker:{fact.speaker}"),
                confidence=1.0,
                valid_from_us=fact.valid_from,
                valid_until_us=fact.valid_until,
                metadata=_metadata(d),
                source_episode_id=episode.id,
                supersede=False,
                supersedes_id=old.id if old is not None else None,
            )
            _graph(rt, ctx, memory, fact, old)
            if old is not None:
                closed[old.id] = memory.id
            if fact.attribute:
                by_attribute[key] = (memory, fact)
            applied.append(d)
            salts.append(memory.salt)
            written.append(memory)
        decided = [d.audit_dict(salt) for d, salt in zip(applied, salts, strict=True)]
        auditor.record(
            ctx,
            "ingest_round",
            episode.id,
            {"decisions": decided, "memories": [m.id for m in written]},
        )
    return applied, written, warnings
