"""AgentMemory: the one public API.

Order of every call: permission check (before any I/O), input validation,
then one store transaction for everything the call writes. Interfaces (CLI,
REST, MCP, client) map onto these methods and add no logic of their own.

This module keeps construction, the helpers every method uses and the writes
(``add``, ``update``, ``forget``); the other methods come from one mixin per
concern: memory_read.py, memory_retrieval.py, memory_governance.py and
memory_ingest.py. The write path they share is memory_write.py.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from types import TracebackType
from typing import Any

from attestor_arango.clock import Clock, SystemClock, TickClock, parse_time
from attestor_arango.config import Config, load_config
from attestor_arango.context import AgentContext, Permission
from attestor_arango.core import audit as audit_log
from attestor_arango.core.writes import write_memory
from attestor_arango.embeddings import Embedder
from attestor_arango.errors import AccessDenied, ConflictError, NotFoundError, ValidationError
from attestor_arango.governance.access import audit_denial
from attestor_arango.governance.signing import Signer
from attestor_arango.ids import IdSource, UUID7Source
from attestor_arango.memory_governance import GovernanceMixin
from attestor_arango.memory_ingest import IngestMixin
from attestor_arango.memory_read import ReadMixin
from attestor_arango.memory_retrieval import RetrievalMixin
from attestor_arango.models import AuditEntry, Memory, MemoryStatus, Stats
from attestor_arango.retrieval import RetrievalConfig
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.factory import open_store
from attestor_arango.store.protocol import Store
from attestor_arango.validation import (
    TimeInput,
    check_confidence,
    check_content,
    check_label,
    check_limit,
    check_metadata,
    check_tags,
    check_window,
)

_UNSET: Any = object()


def _default_embedder(config: Config) -> Embedder:
    try:
        from attestor_arango.embeddings.chain import make_embedder
    except ImportError:
        from attestor_arango.embeddings import HashingEmbedder

        return HashingEmbedder()
    return make_embedder(config)


class AgentMemory(ReadMixin, RetrievalMixin, GovernanceMixin, IngestMixin):
    """Shared, bi-temporal memory for a team of agents."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        config: Config | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        context: AgentContext | None = None,
    ) -> None:
        if config is None:
            config = load_config(path=str(path) if path is not None else None)
        elif path is not None:
            config = config.model_copy(update={"path": str(path)})
        self.config = config
        self.clock = TickClock(clock or SystemClock())
        self.ids: IdSource = ids or UUID7Source()
        self.store: Store = store or open_store(config)
        self.embedder: Embedder = embedder or _default_embedder(config)
        self.default_context = context or AgentContext()
        self.retrieval_config = RetrievalConfig.from_dict(config.retrieval)
        self.signer: Signer | None = Signer.from_settings(
            config.signing, config.db_path().parent if config.backend == "embedded" else None
        )

    # lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> AgentMemory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # helpers ----------------------------------------------------------------------------------
    def _ctx(self, context: AgentContext | None) -> AgentContext:
        if context is not None and not isinstance(context, AgentContext):
            raise ValidationError("context must be an AgentContext")
        return context or self.default_context

    def _require(self, ctx: AgentContext, permission: Permission, operation: str) -> None:
        """``ctx.require`` plus an audit entry for every refusal (the entry needs no permission)."""
        try:
            ctx.require(permission, operation)
        except AccessDenied as exc:
            audit_denial(self, ctx, operation, exc)
            raise

    def _scope(self, ctx: AgentContext, namespace: str | None = None) -> Scope:
        return Scope(ctx.tenant, namespace or ctx.namespace)

    def _view(
        self,
        as_of: TimeInput | None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        include_closed: bool = False,
    ) -> TemporalView:
        now = self.clock.now_us()
        if as_of is None:
            at = now
        else:
            at = parse_time(as_of, field="as_of")
            if at > now:
                raise ValidationError(
                    "as_of is in the future; the past can be replayed, the future not yet",
                )
        return TemporalView(
            as_of=at, window=check_window(time_window), include_closed=include_closed
        )

    def _audit(
        self,
        ctx: AgentContext,
        action: str,
        target: str | None,
        details: dict[str, Any] | None = None,
    ) -> AuditEntry:
        now = self.clock.now_us()
        return audit_log.append(
            self.store,
            Scope(ctx.tenant),
            entry_id=self.ids.new_id(now),
            ts_us=now,
            agent_id=ctx.agent_id,
            role=ctx.role.value,
            action=action,
            target=target,
            details={"namespace": ctx.namespace, **(details or {})},
        )

    # the one write path, in memory_write.py; ingest and reflection call it too
    _write_memory = write_memory

    # writes -----------------------------------------------------------------------------------
    def add(
        self,
        content: str,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = (),
        confidence: float = 1.0,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        source_episode_id: str | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Stores a fact; an active fact with the same entity and category is superseded."""
        ctx = self._ctx(context)
        self._require(ctx, Permission.WRITE, "add")
        text = check_content(content, self.config.max_content_chars)
        start = None if valid_from is None else parse_time(valid_from, field="valid_from")
        end = None if valid_until is None else parse_time(valid_until, field="valid_until")
        if start is not None and end is not None and end <= start:
            raise ValidationError("valid_until must be after valid_from")
        return self._write_memory(
            ctx,
            content=text,
            entity=check_label(entity, "entity"),
            category=check_label(category, "category"),
            tags=check_tags(tags),
            confidence=check_confidence(confidence),
            valid_from_us=start,
            valid_until_us=end,
            metadata=check_metadata(metadata),
            source_episode_id=check_label(source_episode_id, "source_episode_id"),
        )

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        entity: str | None = _UNSET,
        category: str | None = _UNSET,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        confidence: float | None = None,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Writes a new version and closes the old one; nothing is rewritten in place."""
        ctx = self._ctx(context)
        self._require(ctx, Permission.WRITE, "update")
        old = self.get(memory_id, context=ctx)
        if not old.is_active:
            raise ConflictError(
                f"memory {old.id} is {old.status.value}; update its current version "
                f"{old.superseded_by or '(none: it was forgotten)'}",
            )
        text = (
            old.content
            if content is None
            else check_content(content, self.config.max_content_chars)
        )
        start = old.us("valid_from") if valid_from is None else parse_time(valid_from)
        end = old.us("valid_until") if valid_until is None else parse_time(valid_until)
        return self._write_memory(
            ctx,
            content=text,
            entity=old.entity if entity is _UNSET else check_label(entity, "entity"),
            category=old.category if category is _UNSET else check_label(category, "category"),
            tags=old.tags if tags is None else check_tags(tags),
            confidence=old.confidence if confidence is None else check_confidence(confidence),
            valid_from_us=start,
            valid_until_us=end,
            metadata=old.metadata if metadata is None else check_metadata(metadata),
            source_episode_id=old.provenance.source_episode_id,
            supersedes_id=old.id,
        )

    def forget(
        self, memory_id: str, *, reason: str | None = None, context: AgentContext | None = None
    ) -> Memory:
        """Archives a memory: closes it in transaction time; the row stays for replay."""
        ctx = self._ctx(context)
        self._require(ctx, Permission.FORGET, "forget")
        scope = self._scope(ctx)
        with self.store.transaction():
            old = self.store.get_memory(scope, memory_id)
            if old is None:
                raise NotFoundError(f"memory {memory_id} not found in this scope")
            if not old.is_active:
                raise ConflictError(f"memory {memory_id} is already {old.status.value}")
            now = self.clock.now_us()
            self.store.close_memory(scope, memory_id, now, MemoryStatus.ARCHIVED.value, None)
            self._audit(ctx, "forget", memory_id, {"reason": reason})
            closed = self.store.get_memory(scope, memory_id)
        assert closed is not None
        return closed

    def stats(self, *, context: AgentContext | None = None) -> Stats:
        ctx = self._ctx(context)
        self._require(ctx, Permission.READ, "stats")
        scope = self._scope(ctx)
        counts = self.store.count_rows(scope)
        space = self.store.get_embedding_space(scope)
        return Stats(
            tenant=scope.tenant,
            namespace=scope.namespace,
            total=counts["total"],
            active=counts["active"],
            superseded=counts["superseded"],
            archived=counts["archived"],
            episodes=counts["episodes"],
            entities=counts["entities"],
            relations=counts["relations"],
            audit_entries=counts["audit"],
            embedder=space.name if space else None,
            dimension=space.dimension if space else None,
        )

    def health(self) -> dict[str, Any]:
        report = dict(self.store.health())
        report["embedder"] = {"name": self.embedder.name, "dimension": self.embedder.dimension}
        return report

    def audit_log(
        self, *, limit: int = 100, after_seq: int = 0, context: AgentContext | None = None
    ) -> builtins.list[AuditEntry]:
        """The tenant's audit chain, oldest first."""
        ctx = self._ctx(context)
        self._require(ctx, Permission.READ, "audit_log")
        return self.store.read_audit(Scope(ctx.tenant), check_limit(limit), after_seq)
