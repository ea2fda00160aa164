"""The single write path: embedding, quotas, dedup, supersession, signing, audit.

``add``, ``update``, ingestion and reflection all end in ``Writer.write``, so a rule
enforced here holds for every write. The caller (``AgentMemory``) has checked the
permission once; the writer checks what only the store can tell (quota, supersession).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from attestor_arango.cancel import check_cancelled
from attestor_arango.clock import OPEN, from_us, parse_time
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor, extra_digest, row_digest
from attestor_arango.core.quota import check_quota
from attestor_arango.core.recall_key import keep_recall_key
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import (
    ConflictError,
    EmbeddingMismatchError,
    NotFoundError,
    ValidationError,
)
from attestor_arango.ids import new_salt
from attestor_arango.models import Entity, Memory, MemoryStatus, Provenance
from attestor_arango.models import content_hash as hash_content
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import EmbeddingSpace, MemoryFilter
from attestor_arango.validation import (
    TagsInput,
    TimeInput,
    check_confidence,
    check_content,
    check_label,
    check_metadata,
    check_tags,
    entity_key,
)

KEEP: Any = object()  # ``update``'s "leave entity / category as they are" (None clears them)


@dataclass(frozen=True)
class Changes:
    """What an ``update`` sets, validated; ``None`` (``KEEP`` for entity and category)
    keeps the old version's value."""

    content: str | None = None
    entity: str | None = KEEP
    category: str | None = KEEP
    tags: tuple[str, ...] | None = None
    confidence: float | None = None
    valid_from_us: int | None = None
    valid_until_us: int | None = None
    metadata: dict[str, Any] | None = None


def check_changes(
    max_content_chars: int,
    *,
    content: str | None,
    entity: str | None,
    category: str | None,
    tags: TagsInput,
    confidence: float | None,
    valid_from: TimeInput | None,
    valid_until: TimeInput | None,
    metadata: dict[str, Any] | None,
) -> Changes:
    """``update``'s arguments, each checked as ``add`` checks it; raises ``ValidationError``."""
    return Changes(
        content=None if content is None else check_content(content, max_content_chars),
        entity=KEEP if entity is KEEP else check_label(entity, "entity"),
        category=KEEP if category is KEEP else check_label(category, "category"),
        tags=None if tags is None else check_tags(tags),
        confidence=None if confidence is None else check_confidence(confidence),
        valid_from_us=None if valid_from is None else parse_time(valid_from),
        valid_until_us=None if valid_until is None else parse_time(valid_until),
        metadata=None if metadata is None else check_metadata(metadata),
    )


def embed(rt: Runtime, scope: Scope, texts: list[str]) -> tuple[np.ndarray, EmbeddingSpace, bool]:
    """Embeds in the tenant's embedding space.

    Returns the vectors, the space they are in, and whether the tenant has none recorded
    yet (its first write): the caller records that space, or holds it
    (``Store.hold_embedding_space``), inside its write transaction, so a rejected write
    leaves nothing behind and no re-embedding switches the space before the write commits
    (a purge that erased the space meanwhile makes the write the tenant's first again).
    Raises ``EmbeddingMismatchError`` when the tenant holds vectors of another embedder.
    """
    space = rt.store.get_embedding_space(scope)
    mine = EmbeddingSpace(rt.embedder.name, rt.embedder.dimension)
    if space is not None and space != mine:
        raise mismatch(scope, space, mine)
    return rt.embedder.embed(texts), mine, space is None


def mismatch(
    scope: Scope, stored: EmbeddingSpace | None, mine: EmbeddingSpace
) -> EmbeddingMismatchError:
    """The error of a write embedded with ``mine`` into a tenant whose space is ``stored``."""
    held = "no vectors" if stored is None else f"vectors of {stored.name} ({stored.dimension}-d)"
    return EmbeddingMismatchError(
        f"tenant {scope.tenant!r} holds {held} but this memory embeds with {mine.name} "
        f"({mine.dimension}-d); configure the same embedder, or move the tenant to this one "
        "with `attestor-arango reembed` (AgentMemory.reembed(); import also re-embeds every "
        "memory)",
        stored=None if stored is None else stored.name,
        configured=mine.name,
    )


def said_otherwise_since(
    rt: Runtime, scope: Scope, view: TemporalView, old: Memory, vector: np.ndarray
) -> bool:
    """Whether a memory said after ``old`` (a later event time, or the same one written
    later) is the nearest to ``old``'s words among the others the view sees, at least
    ``freshness_cue_similarity`` close: a statement about the same subject came since, so
    the same words again ("A", "B", "A") say the subject changed back.

    Scale-free like freshness's nearest test (the nearest, not a threshold of one embedder),
    with the floor freshness uses; a repeat whose nearest other memory is older, or far,
    repeats what was last said about its subject (a script re-adding its facts).
    """
    floor = rt.retrieval_config.freshness_cue_similarity
    for hit in rt.store.vector_candidates(scope, vector, 3, view):
        if hit.memory.id == old.id or hit.memory.content_hash == old.content_hash:
            continue
        after = (hit.memory.us("valid_from"), hit.memory.us("t_created")) > (
            old.us("valid_from"),
            old.us("t_created"),
        )
        return after and hit.score >= floor
    return False


@contextmanager
def _given_back_on_failure(ctx: AgentContext) -> Iterator[list[bool]]:
    """A flag the write sets once its quota check has counted it (``check_quota`` with
    ``claim``); that count is given back when the block then raises (nothing stored)."""
    claimed = [False]
    try:
        yield claimed
    except BaseException:
        if claimed[0]:
            ctx.usage.take_back(1)
        raise


class Writer:
    """The one write path of a memory; built once from the runtime and its auditor."""

    def __init__(self, runtime: Runtime, auditor: Auditor) -> None:
        self.runtime = runtime
        self.auditor = auditor
        self._batch = threading.local()  # per thread: writes counted inside ``together``

    @contextmanager
    def together(self, ctx: AgentContext) -> Iterator[None]:
        """Several writes of one call (turns, a round's facts) in one transaction: all are
        stored or none. When they roll back, the writes already counted against ``ctx``'s
        per-agent limit are given back, so a call refused part-way spends nothing.
        Re-raises what the writes raise."""
        outer: list[int] | None = getattr(self._batch, "made", None)
        made = [0]
        self._batch.made = made
        try:
            with self.runtime.store.transaction():  # its commit passes cancel.py
                yield
        except BaseException:
            ctx.usage.take_back(made[0])
            raise
        finally:
            self._batch.made = outer
        if outer is not None:  # an enclosing batch gives these back too if it rolls back
            outer[0] += made[0]

    def write(
        self,
        ctx: AgentContext,
        *,
        content: str,
        entity: str | None,
        category: str | None,
        tags: tuple[str, ...],
        confidence: float,
        valid_from_us: int | None,
        valid_until_us: int | None,
        metadata: dict[str, Any],
        source_episode_id: str | None,
        supersede: bool = True,
        supersedes_id: str | None = None,
        cited_by_caller: bool = False,
    ) -> Memory:
        """The single write path: quota, dedup, supersession, signing, graph, audit.

        ``cited_by_caller``: ``source_episode_id`` came from the caller (``add``), so it must
        name an episode of the caller's scope: a memory citing another tenant's (or no)
        episode as its evidence would point outside its tenant.

        Raises ``ValidationError`` (bad validity interval), ``QuotaExceededError``,
        ``EmbeddingMismatchError``, ``NotFoundError`` / ``ConflictError`` (``supersedes_id``
        missing or already closed, a cited episode not in the scope), ``StoreError`` and
        ``CallCancelled`` (the request timed out: ``cancel.py``); nothing is written
        when it raises.
        """
        rt, auditor = self.runtime, self.auditor
        # an early stop only (a batch whose caller gave up stops at its next write instead
        # of embedding the rest); the store's commit is what refuses it (cancel.py)
        check_cancelled("the write")
        scope = rt.scope(ctx)
        vectors, space, first = embed(rt, scope, [content])
        vector = vectors[0]
        digest = hash_content(content)
        # the agent's write is counted by the quota check (atomic for the process) and
        # given back when anything after it, the commit included, fails
        with _given_back_on_failure(ctx) as claimed, rt.store.transaction():
            now = rt.clock.now_us()
            view = TemporalView(as_of=now)
            start = now if valid_from_us is None else valid_from_us
            end = OPEN if valid_until_us is None else valid_until_us
            if end <= start:
                raise ValidationError(
                    "valid_until must be after valid_from (which defaults to now); pass "
                    "valid_from for a fact that ended in the past",
                )
            if (
                cited_by_caller
                and source_episode_id is not None
                and rt.store.get_episode(scope, source_episode_id) is None
            ):
                raise NotFoundError(
                    f"episode {source_episode_id} not found in this scope; a memory cites an "
                    "episode of its own tenant and namespace as its evidence",
                    field="source_episode_id",
                )
            if supersedes_id is None:
                same = rt.store.list_memories(
                    scope,
                    MemoryFilter(content_hash=digest, entity=entity, category=category),
                    view,
                    limit=1,
                )
                # the same words again are the same memory, unless said at a later event
                # time: then they are news again ("I work from home" -> "I work at the
                # office" -> "I work from home"), a new version of the old row. Without a
                # valid_from the event time is now: news again only when something was said
                # about the same subject since (``said_otherwise_since``), so a plain repeat
                # of what was last said stays the same memory
                if same and (
                    start <= same[0].us("valid_from")
                    or (
                        valid_from_us is None
                        and not said_otherwise_since(rt, scope, view, same[0], vector)
                    )
                ):
                    return same[0]
                if same:
                    supersedes_id = same[0].id
            day = check_quota(rt, ctx, scope, now, claim=True)
            claimed[0] = True
            to_close: list[Memory] = []
            if supersedes_id is not None:
                old = rt.store.get_memory(scope, supersedes_id)
                if old is None:
                    raise NotFoundError(f"memory {supersedes_id} not found in this scope")
                if not old.is_active:
                    raise ConflictError(
                        f"memory {old.id} was already closed ({old.status.value}); update its "
                        f"current version {old.superseded_by or '(none: it was forgotten)'}",
                    )
                to_close.append(old)
            if supersede and entity is not None and category is not None:
                for old in rt.store.find_active(scope, entity, category, view):
                    if old.content_hash != digest and old.id not in {m.id for m in to_close}:
                        to_close.append(old)
            memory = Memory(
                id=rt.ids.new_id(now),
                tenant=scope.tenant,
                namespace=scope.require_namespace(),
                content=content,
                entity=entity,
                category=category,
                tags=tags,
                confidence=confidence,
                valid_from=from_us(start),
                valid_until=None if end >= OPEN else from_us(end),
                t_created=from_us(now),
                supersedes=to_close[0].id if to_close else None,
                provenance=Provenance(
                    agent_id=ctx.agent_id,
                    role=ctx.role.value,
                    session_id=ctx.session_id,
                    source_episode_id=source_episode_id,
                    agent_trail=ctx.agent_trail,
                    parent_agent_id=ctx.parent_agent_id,
                ),
                content_hash=digest,
                metadata=metadata,
                salt=new_salt(rt.ids),
            )
            if rt.signer is not None:
                memory = memory.model_copy(update={"signature": rt.signer.sign(memory)})
            if first:
                rt.store.set_embedding_space(scope, space)
            elif not rt.store.hold_embedding_space(scope, space):
                held = rt.store.get_embedding_space(scope)
                if held is not None:  # a re-embedding switched the tenant since embed()
                    raise mismatch(scope, held, space)
                # a purge erased the tenant's vectors since: this is its first write again
                rt.store.set_embedding_space(scope, space)
            rt.store.insert_memory(scope, memory, vector)
            keep_recall_key(rt.store, rt.config, rt.ids, scope.tenant)  # recalls then only read
            # every write is in the chain, with the digest verification recomputes from the row
            digests = {"row": row_digest(memory), "extra": extra_digest(memory)}
            auditor.record(ctx, "add", memory.id, digests, salt=memory.salt)
            for old in to_close:
                rt.store.close_memory(scope, old.id, now, MemoryStatus.SUPERSEDED.value, memory.id)
                action = "update" if old.id == supersedes_id else "supersede"
                auditor.record(ctx, action, old.id, {"by": memory.id, "at": now})
            if entity is not None:
                rt.store.upsert_entity(
                    scope,
                    Entity(
                        tenant=scope.tenant,
                        namespace=scope.require_namespace(),
                        key=entity_key(entity),
                        name=entity,
                    ),
                )
            rt.store.add_writes(scope, day, 1)
        batch: list[int] | None = getattr(self._batch, "made", None)
        if batch is not None:
            batch[0] += 1
        return memory

    def _current(self, scope: Scope, memory_id: str, closed: Callable[[Memory], str]) -> Memory:
        """The stored row of ``memory_id`` when it is current; raises ``NotFoundError`` for an
        id the scope lacks and ``ConflictError`` (``closed``'s message) for a closed row."""
        old = self.runtime.store.get_memory(scope, memory_id)
        if old is None:
            raise NotFoundError(f"memory {memory_id} not found in this scope")
        if not old.is_active:
            raise ConflictError(closed(old))
        return old

    def update(self, ctx: AgentContext, memory_id: str, changes: Changes) -> Memory:
        """A new version of a current memory: ``changes`` over the old version's fields;
        the current version itself, with nothing written, when they change nothing.

        The row is read and the no-op decided inside a transaction, as stored (not as seen
        at this process's "now"): a version another writer closed, whatever its clock, is
        never handed back as current. Nothing is rewritten in place; the old version is
        closed by ``write``, which checks again that it is current. Raises
        ``NotFoundError`` for an unknown id, ``ConflictError`` when the memory is no longer
        current (the message names its current version), and what ``write`` raises.
        """
        rt = self.runtime
        scope = rt.scope(ctx)
        with rt.store.transaction():
            old = self._current(
                scope,
                memory_id,
                lambda m: (
                    f"memory {m.id} is {m.status.value}; update its current version "
                    f"{m.superseded_by or '(none: it was forgotten)'}"
                ),
            )
            c = changes
            fields: dict[str, Any] = {
                "content": old.content if c.content is None else c.content,
                "entity": old.entity if c.entity is KEEP else c.entity,
                "category": old.category if c.category is KEEP else c.category,
                "tags": old.tags if c.tags is None else c.tags,
                "confidence": old.confidence if c.confidence is None else c.confidence,
                "valid_from_us": (
                    old.us("valid_from") if c.valid_from_us is None else c.valid_from_us
                ),
                "valid_until_us": (
                    old.us("valid_until") if c.valid_until_us is None else c.valid_until_us
                ),
                "metadata": old.metadata if c.metadata is None else c.metadata,
            }
            if fields == _fields_of(old):
                # nothing would change: the current version is the answer, as a repeated
                # ``add`` returns the memory it repeats (no version, no audit entry, no quota)
                return old
        return self.write(
            ctx,
            **fields,
            source_episode_id=old.provenance.source_episode_id,
            supersedes_id=old.id,
        )

    def forget(self, ctx: AgentContext, memory_id: str, reason: str | None) -> Memory:
        """Archives a current memory: closes it in transaction time, the row stays.

        ``memory_id`` is a full id of the context's scope. Raises ``NotFoundError`` for an
        unknown id and ``ConflictError`` when the memory is already closed; nothing is
        changed when it raises.
        """
        rt = self.runtime
        scope = rt.scope(ctx)
        with rt.store.transaction():
            old = self._current(
                scope, memory_id, lambda m: f"memory {m.id} is already {m.status.value}"
            )
            now = rt.clock.now_us()
            rt.store.close_memory(scope, memory_id, now, MemoryStatus.ARCHIVED.value, None)
            # the reason may quote the memory: its digest is keyed by the row's salt
            details = {"reason": reason, "at": now}
            self.auditor.record(ctx, "forget", memory_id, details, salt=old.salt)
            closed = rt.store.get_memory(scope, memory_id)
        if closed is None:  # the row was written in the same transaction
            raise NotFoundError(f"memory {memory_id} vanished while it was being archived")
        return closed


def _fields_of(memory: Memory) -> dict[str, Any]:
    """The fields ``update`` may change, as ``Writer.write`` takes them."""
    return {
        "content": memory.content,
        "entity": memory.entity,
        "category": memory.category,
        "tags": memory.tags,
        "confidence": memory.confidence,
        "valid_from_us": memory.us("valid_from"),
        "valid_until_us": memory.us("valid_until"),
        "metadata": memory.metadata,
    }
