"""Subject-access export of one tenant, and restoring an export into an empty tenant.

The export is plain JSON (times as ISO-8601 strings): every memory version
with its full history and provenance, every verbatim episode, the sessions they
belong to, the graph, the quota, and the tenant's whole audit chain. Vectors
are not exported; they are derived data, recomputed by the importing store's
embedder.

Import writes everything in one transaction into a tenant that holds no data
(an audit chain may exist, e.g. after a purge). The source audit chain is not
replayed: the target keeps its own chain, and an ``import`` entry records the
source tenant, entry count and the source chain's last hash, which links the
two chains for an investigator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN, check_not_ahead, iso, parse_time, to_us
from attestor_arango.context import AgentContext, AgentRole, check_agent_text
from attestor_arango.core.audit import Auditor, token
from attestor_arango.core.paging import all_episodes, all_memories
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ConflictError, ValidationError, shown
from attestor_arango.governance.audit_chain import iter_chain
from attestor_arango.governance.consistent import read_as_one
from attestor_arango.governance.import_guard import require_importable
from attestor_arango.governance.import_source import chain_head, check_head_of, check_source
from attestor_arango.governance.quotas import check_limit as check_daily_writes
from attestor_arango.governance.rekey import rekey, source_tenant
from attestor_arango.governance.row_check import import_rows
from attestor_arango.ingest.model import MAX_TURN_CHARS
from attestor_arango.models import Entity, Episode, Memory, MemoryStatus, Relation, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import (
    EmbeddingSpace,
    EpisodeStore,
    MemoryFilter,
    MemoryStore,
)
from attestor_arango.validation import (
    MAX_LABEL,
    check_content,
    check_label,
    check_metadata,
    check_tags,
    check_text,
    entity_key,
    model_problems,
)

FORMAT = "attestor-arango-export"
MAX_ID = 128  # an imported id (kept when the tenant is the export's own)
VERSION = 1
EMBED_BATCH = 64


def _all_memories(store: MemoryStore, scope: Scope, as_of: int) -> Iterator[Memory]:
    view = TemporalView(as_of=as_of, include_closed=True)
    return all_memories(store, scope, MemoryFilter(), view)


def _all_episodes(store: EpisodeStore, scope: Scope) -> Iterator[Episode]:
    return all_episodes(store, scope)


def _sessions(memories: list[Memory], episodes: list[Episode]) -> list[dict[str, Any]]:
    sessions: dict[str, dict[str, Any]] = {}
    for m in memories:
        sid = m.provenance.session_id
        if sid:
            s = sessions.setdefault(sid, {"session_id": sid, "memories": 0, "episodes": 0})
            s["memories"] += 1
    for e in episodes:
        if e.session_id:
            s = sessions.setdefault(
                e.session_id, {"session_id": e.session_id, "memories": 0, "episodes": 0}
            )
            s["episodes"] += 1
    return [sessions[k] for k in sorted(sessions)]


def export_user(rt: Runtime, auditor: Auditor, ctx: AgentContext, user: str) -> dict[str, Any]:
    """Everything the store holds about tenant ``user``, as a JSON-ready dict; read as one
    state of the tenant (``consistent.read_as_one``), so its rows agree with its chain."""
    data = read_as_one(rt.store, user, lambda: _document(rt, ctx, user))
    counts = {k: len(data[k]) for k in ("memories", "episodes", "entities", "relations")}
    auditor.record(ctx, "export", user, {**counts, "audit_entries": len(data["audit"])})
    return data


def _document(rt: Runtime, ctx: AgentContext, user: str) -> dict[str, Any]:
    store = rt.store
    scope = Scope(user)
    now = rt.clock.now_us()
    memories = list(_all_memories(store, scope, now))
    episodes = list(_all_episodes(store, scope))
    entities = store.list_entities(scope)
    keys = sorted({e.key for e in entities})
    view = TemporalView(as_of=now, include_closed=True)
    relations = store.relations_touching(scope, keys, view) if keys else []
    audit = list(iter_chain(store, user))
    space, at = store.get_embedding_space(scope), iso(now)
    document = {
        "format": FORMAT,
        "version": VERSION,
        "tenant": user,
        "exported_at": at,
        "exported_by": ctx.agent_id,
        "embedding_space": None
        if space is None
        else {"name": space.name, "dimension": space.dimension},
        "quota": {"daily_writes": store.get_quota(scope)},
        # lets the subject or an auditor check every signature without the private key
        "signing": None
        if rt.signer is None
        else {"key_id": rt.signer.key_id, "public_key": rt.signer.public_pem()},
        "memories": [m.model_dump(mode="json") for m in memories],
        "episodes": [e.model_dump(mode="json") for e in episodes],
        "sessions": _sessions(memories, episodes),
        "entities": [e.model_dump(mode="json") for e in entities],
        "relations": [r.model_dump(mode="json") for r in relations],
        "audit": [a.model_dump(mode="json") for a in audit],
    }
    # what the import checks the list's end and the sections no entry records by
    return {**document, "chain": chain_head(rt.signer, user, audit, document)}


def _retenant(doc: dict[str, Any], tenant: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ValidationError("export rows must be JSON objects")
    return {**doc, "tenant": tenant}


def _rows(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    rows = data.get(key, [])
    if not isinstance(rows, list):
        raise ValidationError(f"export field {key!r} must be a list")
    return rows


def _source_text(value: object, what: str, time: bool = False) -> str | None:
    """A field the import's audit entry keeps about its source: None, or text of at most
    ``MAX_LABEL`` characters (an edited export could put any JSON there, and the audit
    chain cannot be edited afterwards), with ``time`` a time: kept verbatim, a word there
    outlived the purge of the tenant. Raises ``ValidationError`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_LABEL:
        raise ValidationError(f"export {what} must be text of at most {MAX_LABEL} characters")
    text = check_text(value, f"export {what}")
    if time:
        parse_time(text, field=f"export {what}")  # raises ValidationError
    return text


def parse_export(data: object, tenant: str) -> dict[str, Any]:
    """Validates an export and rebinds every row to ``tenant``; nothing is written."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValidationError(f"not an attestor-arango export (expected format {FORMAT!r})")
    if data.get("version") != VERSION:
        raise ValidationError(
            f"export version {shown(data.get('version'))} is not supported; this package reads "
            f"version {VERSION}"
        )
    try:
        parsed: dict[str, Any] = {
            "memories": [
                Memory.model_validate(_retenant(d, tenant)) for d in _rows(data, "memories")
            ],
            "episodes": [
                Episode.model_validate(_retenant(d, tenant)) for d in _rows(data, "episodes")
            ],
            "entities": [
                Entity.model_validate(_retenant(d, tenant)) for d in _rows(data, "entities")
            ],
            "relations": [
                Relation.model_validate(_retenant(d, tenant)) for d in _rows(data, "relations")
            ],
        }
    except ValidationError:
        raise
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ValidationError(f"the export holds a malformed row: {model_problems(exc)}") from exc
    quota_doc = data.get("quota")
    if quota_doc is not None and not isinstance(quota_doc, dict):
        raise ValidationError("export field 'quota' must be an object or null")
    try:  # set_quota's own check: an import cannot store a quota set_quota would refuse
        parsed["quota"] = check_daily_writes((quota_doc or {}).get("daily_writes"))
    except ValidationError as exc:
        raise ValidationError(f"the export's quota: {exc.message}") from None
    audit = parsed["audit"] = _rows(data, "audit")  # import_source checks the rows against it
    last = audit[-1].get("hash") if audit and isinstance(audit[-1], dict) else None
    parsed["source"] = {  # kept in the import's audit entry: short text only
        "tenant": _source_text(source_tenant(data), "tenant"),
        "exported_at": _source_text(data.get("exported_at"), "exported_at", time=True),
        "audit_entries": len(audit),
        "audit_last_hash": _source_text(last, "the last audit entry's hash"),
    }
    ids = [m.id for m in parsed["memories"]]
    if len(set(ids)) != len(ids):
        raise ValidationError("the export lists a memory id twice")
    return parsed


def check_times(parsed: dict[str, Any], now: int) -> None:
    """Every transaction time of an import must have happened by ``now``, a tick of the
    server's clock (``clock.check_not_ahead`` without skew).

    The import never moves the clock: the server's clock is shared by every tenant, and a
    tenant's data must not move another tenant's time, quota day or chain. A time allowed
    a minute ahead would have to push the clock past it (later writes must get later
    transaction times), and purge-and-import again would push it another minute, without
    end. With every stored time at or before a tick already handed out, the next tick is
    later than all of them and nothing moves. Raises ``ValidationError`` naming the first
    row that is ahead.
    """

    def happened(value: int, field: str) -> None:
        check_not_ahead(value, now, field=field, skew_us=0)

    for m in parsed["memories"]:
        for name in ("t_created", "t_expired"):
            value = m.us(name)
            if value < OPEN:
                happened(value, f"memory {m.id} {name}")
    for e in parsed["episodes"]:
        happened(to_us(e.t_created), f"episode {e.id} t_created")
        happened(to_us(e.user_time), f"episode {e.id} user_time")
        if e.assistant_time is not None:
            happened(to_us(e.assistant_time), f"episode {e.id} assistant_time")
    for r in parsed["relations"]:
        happened(to_us(r.t_created), f"relation {r.id} t_created")


def check_memories(memories: list[Memory], max_chars: int) -> list[Memory]:
    """Every imported memory is a row the write path could have stored: a short id;
    content, labels, tags and metadata that pass ``add``'s checks; validity that ends
    after it starts; a closing that agrees with its status (open and active; closed no
    earlier than created, superseded by another row or archived without a successor). Raises
    ``ValidationError`` naming the first row that is not. Returns the memories with
    ``content_hash`` (derived data, what dedup compares) computed from their content, as
    a hand-edited export may not have it right."""
    checked: list[Memory] = []
    for m in memories:
        try:
            for row_id, what in ((m.id, "id"), (m.superseded_by, "superseded_by")):
                if row_id is not None and (not row_id or token(row_id) != row_id):
                    raise ValidationError(  # the import entry records both as they are
                        f"its {what} must be 1-{MAX_ID} characters of letters, digits and "
                        "_.:@+/=-, starting with a letter or digit (as the audit chain keeps ids)"
                    )
            if check_content(m.content, max_chars) != m.content:
                raise ValidationError("content has surrounding whitespace add would strip")
            for label, what in ((m.entity, "entity"), (m.category, "category")):
                if label is not None and check_text(str(check_label(label, what)), what) != label:
                    raise ValidationError(f"{what} is not a label as add stores it")
            check_tags(m.tags)
            check_metadata(m.metadata)
            if m.us("valid_until") <= m.us("valid_from"):
                raise ValidationError("valid_until is not after valid_from")
            closed, status = m.t_expired is not None, m.status
            if closed != (status != MemoryStatus.ACTIVE):
                raise ValidationError(f"status {status.value} disagrees with t_expired")
            if closed and m.us("t_expired") < m.us("t_created"):
                raise ValidationError("t_expired is before t_created")
            if (m.superseded_by is not None) != (status == MemoryStatus.SUPERSEDED):
                raise ValidationError(f"superseded_by disagrees with status {status.value}")
            if m.superseded_by == m.id:
                raise ValidationError("it names itself as its successor")
        except ValidationError as exc:
            raise ValidationError(
                f"the export's memory {m.id} cannot be imported: {exc}", memory_id=m.id
            ) from None
        checked.append(m.model_copy(update={"content_hash": content_hash(m.content)}))
    return checked


def check_rows(parsed: dict[str, Any]) -> None:
    """The names and ids an import writes beside its memories are what the write path
    could have written: entity names, keys, kinds and aliases and relation ids, ends and
    names are labels (``check_label``: no control character, no lone surrogate, at most
    ``MAX_LABEL`` characters); episode metadata and relation properties are metadata
    (``check_metadata``), an episode's texts what a turn holds; episode ids and the agent
    ids, trail entries and session ids of memories and episodes are short printable text
    (``check_agent_text``). Raises ``ValidationError`` naming the first row that is not."""
    for m in parsed["memories"]:
        p = m.provenance
        agents = [(p.agent_id, "agent_id"), *((a, "agent_trail entry") for a in p.agent_trail)]
        _agents("memory", m.id, agents, [(p.session_id, "session_id"),
                                         (p.parent_agent_id, "parent_agent_id")])  # fmt: skip
        if p.role not in (roles := [r.value for r in AgentRole]):  # as writes store it
            why = f"its role {p.role[:32]!r} is not one of {', '.join(roles)}"
            raise ValidationError(f"the export's memory {_shown(m.id)} cannot be imported: {why}")
    for e in parsed["episodes"]:
        _agents("episode", e.id, [(e.id, "id"), (e.agent_id, "agent_id")],
                [(e.session_id, "session_id")])  # fmt: skip
        _tree("episode", e.id, e.metadata, "metadata")
        for side, text in (("user_text", e.user_text), ("assistant_text", e.assistant_text)):
            if len(text) > MAX_TURN_CHARS or "\x00" in text:  # ``ingest_round``'s turn rule
                raise ValidationError(
                    f"the export's episode {_shown(e.id)} cannot be imported: its {side} "
                    f"must be at most {MAX_TURN_CHARS} characters, no NUL"
                )
    for n in parsed["entities"]:
        names = [(n.name, "name"), (n.key, "key"), *((a, "alias") for a in n.aliases)]
        _labels("entity", n.key, [*names, *([(n.kind, "kind")] if n.kind is not None else [])])
    for r in parsed["relations"]:
        ends = [(r.source, "source"), (r.relation, "relation"), (r.target, "target")]
        _labels("relation", r.id, [(r.id, "id"), *ends])
        _tree("relation", r.id, r.properties, "properties")


def _tree(kind: str, row_id: str, value: object, what: str) -> None:
    """An episode's metadata or a relation's properties, held to a memory's metadata rule
    (``check_metadata``: size, nesting, 64-bit integers): the live path fills them itself
    with a few short values, a hand-edited export (or a YAML file's aliases) with anything."""
    try:
        check_metadata(value)
    except ValidationError as exc:
        raise ValidationError(
            f"the export's {kind} {_shown(row_id)} cannot be imported: its {what}: {exc}"
        ) from None


def fold_keys(parsed: dict[str, Any]) -> None:
    """Entity keys and relation ends in the form names are matched by (``entity_key``), as
    the write path stores them and schema migration 9 rewrote older ones: an export's key
    "ANN" or "Ａｎｎ" would be an entity no name reaches (two keys that fold to one are one
    row, merged by ``upsert_entity``). ``check_rows`` first: no label it passes folds to
    nothing (every character checked)."""
    for name, fields in (("entities", ("key",)), ("relations", ("source", "target"))):
        parsed[name] = [
            row.model_copy(update={f: entity_key(getattr(row, f)) for f in fields})
            for row in parsed[name]
        ]


def _agents(
    kind: str, row_id: str, required: list[tuple[object, str]], optional: list[tuple[object, str]]
) -> None:
    try:
        for value, what in required:
            check_agent_text(value, what)
        for value, what in optional:
            check_agent_text(value, what, optional=True)
    except ValidationError as exc:
        raise ValidationError(
            f"the export's {kind} {_shown(row_id)} cannot be imported: {exc}"
        ) from None


def _labels(kind: str, row_id: str, labels: list[tuple[str, str]]) -> None:
    try:
        for value, what in labels:
            check_label(value, what)
    except ValidationError as exc:
        raise ValidationError(
            f"the export's {kind} {_shown(row_id)} cannot be imported: {exc}"
        ) from None


def _shown(row_id: str) -> str:
    return repr(row_id if len(row_id) <= 64 else row_id[:64] + "...")


def import_user(rt: Runtime, auditor: Auditor, ctx: AgentContext, data: object) -> dict[str, int]:
    """Restores an export into the context's tenant, which must hold no data.

    Into the tenant it was exported from, every id is kept; into another tenant the
    rows get new ids (see ``rekey``), so a copy never collides with its source. Raises
    ``ValidationError`` for a malformed export and ``ConflictError`` when the tenant
    holds data or an id is already stored.
    """
    tenant = ctx.tenant
    parsed = parse_export(data, tenant)
    parsed["memories"] = check_memories(parsed["memories"], rt.config.max_content_chars)
    check_rows(parsed)
    fold_keys(parsed)
    source = parsed["source"]["tenant"]
    rekeyed = source != tenant
    source_rows, source_audit = parsed["memories"], parsed["audit"]  # as exported
    if rekeyed:
        parsed = rekey(parsed, source, rt.ids)
    purge_seq = require_importable(rt.store, Scope(tenant), None)  # again as it writes
    memories: list[Memory] = parsed["memories"]
    check_times(parsed, rt.clock.now_us())
    check_head_of(data, parsed, source, rt.signer)  # its list's end, and its signatures
    check_source(source_audit, source_rows, source)
    vectors: list[np.ndarray] = []
    for start in range(0, len(memories), EMBED_BATCH):
        chunk = memories[start : start + EMBED_BATCH]
        vectors.extend(rt.embedder.embed([m.content for m in chunk]))
    try:
        counts = _write(rt, auditor, ctx, parsed, vectors, purge_seq)
    except ConflictError as exc:
        raise ConflictError(
            f"ids of this export are already stored in tenant {tenant!r} "
            f"({len(memories)} memories; {'re-keyed' if rekeyed else 'ids kept'}); purge "
            "the tenant first, or import into another store file (--path)",
        ) from exc
    # every stored time is at or before the tick check_times read: the next tick is later
    return {**counts, "rekeyed": int(rekeyed)}


def _write(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    parsed: dict[str, Any],
    vectors: list[np.ndarray],
    purge_seq: int,
) -> dict[str, int]:
    """Every row of the export in one transaction, and the ``import`` audit entry; refused
    when a purge of the tenant runs or began since ``purge_seq`` (``import_guard``)."""
    tenant = ctx.tenant
    store = rt.store
    scope = Scope(tenant)
    memories: list[Memory] = parsed["memories"]
    with store.transaction():
        # another import, a write or a purge may have come since
        require_importable(store, scope, purge_seq)
        if memories and store.get_embedding_space(scope) is None:
            store.set_embedding_space(
                scope, EmbeddingSpace(rt.embedder.name, rt.embedder.dimension)
            )
        for entity in parsed["entities"]:
            store.upsert_entity(Scope(tenant, entity.namespace), entity)
        for episode in parsed["episodes"]:
            store.put_episode(Scope(tenant, episode.namespace), episode)
        for memory, vector in zip(memories, vectors, strict=True):
            store.insert_memory(Scope(tenant, memory.namespace), memory, vector)
        for relation in parsed["relations"]:
            store.add_relation(Scope(tenant, relation.namespace), relation)
        if parsed["quota"] is not None:
            store.set_quota(scope, parsed["quota"])
        counts = {
            "memories": len(memories),
            "episodes": len(parsed["episodes"]),
            "entities": len({(n.namespace, n.key) for n in parsed["entities"]}),
            "relations": len(parsed["relations"]),
        }
        rows = import_rows(memories)  # lets verification check every restored row
        auditor.record(ctx, "import", tenant, {"source": parsed["source"], **counts, "rows": rows})
    return counts
