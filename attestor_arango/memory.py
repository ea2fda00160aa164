"""AgentMemory: the one public API.

Every public method does the same four things, in this order: resolve the context,
check its permission once (a refusal is audited once, then raised), validate the
arguments, and delegate to a service of ``core/``, ``retrieval/``, ``ingest/`` or
``governance/``. Services receive the ``Runtime`` (store, clock, ids, embedder, signer,
configuration), the ``Auditor`` and the ``Writer``; none of them imports this module.
Interfaces (CLI, REST, MCP, client) map onto these methods and add no logic of their own.

Errors (all ``attestor_arango.errors.AttestorError``): ``AccessDenied`` when the context
may not run the method, ``ValidationError`` for bad arguments, ``NotFoundError`` for an id
unknown in the scope, ``ConflictError`` for a change to a closed memory,
``QuotaExceededError`` when a write budget is spent, ``EmbeddingMismatchError`` when the
tenant's vectors come from another embedder, and ``StoreError`` when the store fails.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from attestor_arango.clock import Clock, TickClock, from_us, parse_time
from attestor_arango.config import Config
from attestor_arango.context import AgentContext, Permission
from attestor_arango.core import audit as audit_log
from attestor_arango.core import pages, reads
from attestor_arango.core import reembed as reembed_core
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime, open_runtime
from attestor_arango.core.signing import Signer
from attestor_arango.core.writes import Writer
from attestor_arango.embeddings import Embedder
from attestor_arango.errors import ConflictError, TenantLeakError, ValidationError
from attestor_arango.governance import audit_chain as gov_audit
from attestor_arango.governance import compact as gov_compact
from attestor_arango.governance import export as gov_export
from attestor_arango.governance import provenance as gov_provenance
from attestor_arango.governance import purge as gov_purge
from attestor_arango.governance import quotas as gov_quotas
from attestor_arango.governance import retention as gov_retention
from attestor_arango.governance.access import guard, require, subject
from attestor_arango.ids import IdSource
from attestor_arango.ingest.conversation import ConversationTurn, add_turns
from attestor_arango.ingest.model import IngestResult, Turn
from attestor_arango.ingest.pipeline import Backends
from attestor_arango.models import (
    AuditEntry,
    CutResult,
    Episode,
    Memory,
    MemoryPage,
    RecallExplanation,
    RecallResponse,
    RecordedRecall,
    Stats,
)
from attestor_arango.reports import ConsolidationReport, Reflection
from attestor_arango.retrieval import RetrievalConfig, trace_lookup
from attestor_arango.retrieval import recall as run_recall
from attestor_arango.retrieval.lanes import expanders_for
from attestor_arango.retrieval.pack import ContextPack
from attestor_arango.retrieval.trace import shared_tracer
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import MemoryFilter, Store
from attestor_arango.validation import (
    TimeInput,
    check_confidence,
    check_content,
    check_id,
    check_interval,
    check_label,
    check_limit,
    check_metadata,
    check_offset,
    check_tags,
)

_UNSET: Any = object()
TagsInput = builtins.list[str] | tuple[str, ...] | None
Window = tuple[TimeInput, TimeInput] | None


class AgentMemory:
    """Shared, bi-temporal memory for a team of agents.

    ``path`` (or ``config.path``) picks the embedded store's directory; ``store``,
    ``embedder``, ``clock`` and ``ids`` replace the configured parts (tests inject a
    fixed clock and id source). ``context`` is the default caller of every method.
    """

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
        self._set_runtime(
            open_runtime(path, config=config, store=store, embedder=embedder, clock=clock, ids=ids)
        )
        self.default_context = context or AgentContext()
        # the extractor and resolver of ingest_round; None: the config's LLM, else the rules
        self.ingest_backends: Backends | None = None

    # the runtime and the parts it holds -----------------------------------------------------
    def _set_runtime(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.auditor = Auditor(runtime)
        self.writer = Writer(runtime, self.auditor)

    @property
    def config(self) -> Config:
        return self.runtime.config

    @property
    def store(self) -> Store:
        return self.runtime.store

    @store.setter
    def store(self, store: Store) -> None:
        self._set_runtime(replace(self.runtime, store=store))

    @property
    def embedder(self) -> Embedder:
        return self.runtime.embedder

    @property
    def clock(self) -> TickClock:
        return self.runtime.clock

    @property
    def ids(self) -> IdSource:
        return self.runtime.ids

    @property
    def signer(self) -> Signer | None:
        return self.runtime.signer

    @signer.setter
    def signer(self, signer: Signer | None) -> None:
        self._set_runtime(replace(self.runtime, signer=signer))

    @property
    def retrieval_config(self) -> RetrievalConfig:
        return self.runtime.retrieval_config

    @retrieval_config.setter
    def retrieval_config(self, config: RetrievalConfig) -> None:
        self._set_runtime(replace(self.runtime, retrieval_config=config))

    # lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        """Closes the store; the memory is unusable afterwards."""
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

    # the first two steps of every method ----------------------------------------------------
    def _ctx(self, context: AgentContext | None, permission: Permission, op: str) -> AgentContext:
        """The caller's context, after one permission check (a refusal is audited once)."""
        if context is not None and not isinstance(context, AgentContext):
            raise ValidationError("context must be an AgentContext")
        ctx = context or self.default_context
        require(self.auditor, ctx, permission, op)
        return ctx

    def _guarded(
        self, context: AgentContext | None, op: str, subject: str | None = None
    ) -> AgentContext:
        """The context of a governance operation, checked by ``governance.access.guard``."""
        if context is not None and not isinstance(context, AgentContext):
            raise ValidationError("context must be an AgentContext")
        ctx = context or self.default_context
        guard(self.auditor, ctx, op, subject)
        return ctx

    # writes -----------------------------------------------------------------------------------
    def add(
        self,
        content: str,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: TagsInput = (),
        confidence: float = 1.0,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        source_episode_id: str | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Stores a fact; an active fact with the same entity and category is superseded.

        Raises ``AccessDenied``, ``ValidationError``, ``QuotaExceededError``,
        ``EmbeddingMismatchError`` or ``StoreError``; nothing is stored when it raises.
        """
        ctx = self._ctx(context, Permission.WRITE, "add")
        text = check_content(content, self.config.max_content_chars)
        start, end = check_interval(valid_from, valid_until)
        return self.writer.write(
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
        tags: TagsInput = None,
        confidence: float | None = None,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Writes a new version and closes the old one; nothing is rewritten in place.

        Raises ``NotFoundError`` for an unknown id, ``ConflictError`` when the memory is no
        longer current (the message names its current version), and what ``add`` raises.
        """
        ctx = self._ctx(context, Permission.WRITE, "update")
        view = self.runtime.view(None)
        old = reads.get_memory(self.runtime, self.runtime.scope(ctx), check_id(memory_id), view)
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
        return self.writer.write(
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
        """Archives a memory: closes it in transaction time; the row stays for replay.

        ``memory_id`` may be short, as for ``get``. Raises ``AccessDenied`` (FORGET
        needed), ``NotFoundError``, ``ValidationError`` (an ambiguous short id) or
        ``ConflictError`` (it is already closed).
        """
        ctx = self._ctx(context, Permission.FORGET, "forget")
        memory_id = reads.resolve_id(self.runtime, self.runtime.scope(ctx), check_id(memory_id))
        return self.writer.forget(ctx, memory_id, reason)

    # reads ------------------------------------------------------------------------------------
    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """One memory as it was at ``as_of`` (default now).

        ``memory_id`` may be the full id or an unambiguous start or end of it (4+
        characters, as CLI tables show). With ``time_window`` the memory counts only if
        its event interval overlaps the window, as in ``list``. Raises ``NotFoundError``,
        or ``ValidationError`` naming the ids a short form matches when it matches several.
        """
        ctx = self._ctx(context, Permission.READ, "get")
        scope = self.runtime.scope(ctx)
        memory_id = reads.resolve_id(self.runtime, scope, check_id(memory_id))
        view = self.runtime.view(as_of, time_window)
        return reads.get_memory(self.runtime, scope, memory_id, view)

    def list(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: TagsInput = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: Window = None,
        as_of: TimeInput | None = None,
        limit: int = 100,
        offset: int = 0,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Memories as believed at ``as_of`` (default now); status 'all' includes history.

        Raises ``ValidationError`` for an unknown status, a negative offset, a bad window
        or an ``as_of`` in the future.
        """
        ctx = self._ctx(context, Permission.READ, "list")
        wanted = reads.check_status(status)
        offset = check_offset(offset)
        view = self.runtime.view(as_of, time_window, include_closed=status not in (None, "active"))
        filters = reads.memory_filter(entity, category, tags, wanted)
        scope = self.runtime.scope(ctx, namespace)
        return reads.list_memories(self.runtime, scope, filters, view, check_limit(limit), offset)

    def count(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: TagsInput = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: Window = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> int:
        """How many memories ``list`` pages through with the same arguments (its total).

        Raises ``ValidationError`` for an unknown status, a bad window or a future ``as_of``.
        """
        ctx = self._ctx(context, Permission.READ, "count")
        wanted = reads.check_status(status)
        view = self.runtime.view(as_of, time_window, include_closed=status not in (None, "active"))
        filters = reads.memory_filter(entity, category, tags, wanted)
        return reads.count_memories(self.runtime, self.runtime.scope(ctx, namespace), filters, view)

    def list_page(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: TagsInput = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: Window = None,
        as_of: TimeInput | None = None,
        limit: int = 100,
        cursor: str | None = None,
        context: AgentContext | None = None,
    ) -> MemoryPage:
        """``list`` a page at a time, with the listing's total and a cursor for the next page.

        The first page pins the moment (``as_of``, default now) and every page after it
        reads at that moment, so writes in between never shift or repeat rows. Pass the
        same filters with ``cursor=page.next_cursor``. Raises ``ValidationError`` for a
        damaged cursor or one made for other filters, and whatever ``list`` raises.
        """
        filters: dict[str, Any] = {
            "entity": entity,
            "category": category,
            "tags": tags,
            "namespace": namespace,
            "status": status,
            "time_window": time_window,
            "as_of": as_of,
        }
        digest = pages.filter_digest(filters)
        if cursor is None:
            offset, at_us = 0, self.runtime.view(as_of).as_of
        else:
            offset, at_us = pages.decode_cursor(cursor, digest)
        at = from_us(at_us)
        shared: dict[str, Any] = {**filters, "as_of": at, "context": context}
        rows = self.list(**shared, limit=limit, offset=offset)
        total = self.count(**shared)
        end = offset + len(rows)
        following = pages.encode_cursor(end, at_us, digest) if rows and end < total else None
        return MemoryPage(memories=tuple(rows), total=total, next_cursor=following, as_of=at)

    def get_episode(self, episode_id: str, *, context: AgentContext | None = None) -> Episode:
        """A conversation round as it was stored (the evidence of the facts extracted
        from it), in the context's namespace; raises ``NotFoundError``."""
        ctx = self._ctx(context, Permission.READ, "get_episode")
        episode_id = check_id(episode_id, "episode_id")
        return reads.get_episode(self.runtime, self.runtime.scope(ctx), episode_id)

    def search(
        self,
        query: str | None = None,
        *,
        limit: int = 10,
        entity: str | None = None,
        category: str | None = None,
        tags: TagsInput = None,
        status: str | None = None,
        namespace: str | None = None,
        time_window: Window = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Keyword (BM25) search with the same filters as ``list``; no query: filtered search.

        Filters narrow the candidates in the store before any cut. Raises
        ``ValidationError`` for a blank query string, an unknown status or a bad window.
        """
        ctx = self._ctx(context, Permission.READ, "search")
        query = reads.check_query(query)
        wanted = reads.check_status(status)
        limit = check_limit(limit, maximum=1000)
        view = self.runtime.view(as_of, time_window, include_closed=status not in (None, "active"))
        filters = reads.memory_filter(entity, category, tags, wanted)
        scope = self.runtime.scope(ctx, namespace)
        return reads.search_memories(self.runtime, scope, query, filters, view, limit)

    def timeline(
        self,
        entity: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Every version ever stored about an entity, superseded and archived included;
        with ``time_window`` only versions whose event interval overlaps it.

        Raises ``ValidationError`` without an entity, ``AccessDenied`` without READ.
        """
        ctx = self._ctx(context, Permission.READ, "timeline")
        name = check_label(entity, "entity")
        if name is None:
            raise ValidationError("timeline needs an entity")
        view = self.runtime.view(as_of, time_window, include_closed=True)
        scope = self.runtime.scope(ctx)
        filters = MemoryFilter(entity=name)
        return reads.list_memories(self.runtime, scope, filters, view, reads.TIMELINE_LIMIT)

    def current_facts(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """The active facts (optionally of one entity and category) at ``as_of``; with
        ``time_window`` only those whose event interval overlaps it. The verbatim rounds
        ``ingest_round`` keeps (category ``episode``) are records, not facts: ``list`` and
        ``recall`` show them, this leaves them out unless ``category="episode"`` asks.

        Raises what ``list`` raises (``ValidationError``, ``AccessDenied``).
        """
        rows = self.list(
            entity=entity,
            category=category,
            as_of=as_of,
            time_window=time_window,
            limit=reads.TIMELINE_LIMIT,
            context=context,
        )
        return rows if category is not None else reads.facts_only(rows)

    def stats(self, *, context: AgentContext | None = None) -> Stats:
        """Row counts of the context's scope and the tenant's embedding space.

        Raises ``AccessDenied`` without READ and ``StoreError`` when the store fails.
        """
        ctx = self._ctx(context, Permission.READ, "stats")
        return reads.stats(self.runtime, self.runtime.scope(ctx))

    def health(self) -> dict[str, Any]:
        """The store's health report plus the embedder in use; needs no context.

        No file path: the report reaches every key holder over REST and MCP (the CLI's
        ``doctor`` shows where the store is). Never raises for an unhealthy store (the
        report says so); ``StoreError`` only when the store cannot be asked at all.
        """
        return reads.health(self.runtime)

    def audit_log(
        self, *, limit: int = 100, after_seq: int = 0, context: AgentContext | None = None
    ) -> builtins.list[AuditEntry]:
        """The tenant's audit chain, oldest first.

        Raises ``AccessDenied`` without READ and ``ValidationError`` for a bad limit.
        """
        ctx = self._ctx(context, Permission.READ, "audit_log")
        return self.store.read_audit(Scope(ctx.tenant), check_limit(limit), after_seq)

    # retrieval --------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallResponse:
        """Ranked, budget-packed memories for a query; no LLM, no writes.

        Raises ``ValidationError`` for an empty query or a non-positive budget. A failing
        lane degrades the answer and is named in ``response.errors``.
        """
        return self._recall("recall", query, as_of, time_window, token_budget, context, None)

    def explain_recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallExplanation:
        """``recall`` plus what its token budget cut, from the same single ranking.

        ``explanation.response`` is what ``recall`` returns for the same inputs (same
        recall id, results and breakdowns); ``explanation.cut`` lists the ranked results
        the budget left out with their places. Raises what ``recall`` raises
        (``ValidationError``, ``AccessDenied``).
        """
        cut: builtins.list[CutResult] = []
        response = self._recall(
            "explain_recall", query, as_of, time_window, token_budget, context, cut
        )
        return RecallExplanation(response=response, cut=tuple(cut))

    def recall_trace(
        self, recall_id: str, *, context: AgentContext | None = None
    ) -> RecordedRecall:
        """A recorded recall by its recall id: its inputs (as_of, budget, window, and the
        query if traces keep content), the result ids it returned and its pipeline steps.

        Only the caller's tenant and namespace are searched. Replay it with ``recall`` at
        the recorded ``as_of``. Raises ``ValidationError`` for a malformed id,
        ``AccessDenied`` without READ and ``NotFoundError`` when tracing is off or no such
        recall is recorded in the caller's scope.
        """
        ctx = self._ctx(context, Permission.READ, "recall_trace")
        rid = trace_lookup.check_recall_id(recall_id)
        trace = self.runtime.config.trace
        path = trace.path if trace.enabled else None
        return trace_lookup.find_recall(path, self.runtime.scope(ctx), rid)

    def _recall(
        self,
        op: str,
        query: str,
        as_of: TimeInput | None,
        time_window: Window,
        token_budget: int | None,
        context: AgentContext | None,
        cut: builtins.list[CutResult] | None,
    ) -> RecallResponse:
        ctx = self._ctx(context, Permission.READ, op)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; pass what you want to recall")
        budget = ctx.budget_for(token_budget)  # a ceiling: a caller can only ask for less
        rt = self.runtime
        cfg = rt.retrieval_config
        try:
            response = run_recall(
                rt.store,
                rt.embedder,
                rt.scope(ctx),
                query.strip(),
                rt.view(as_of, time_window),
                budget,
                cfg,
                tracer=shared_tracer(rt.config.trace),
                expanders=expanders_for(
                    cfg.hyde_enabled, cfg.multi_query_enabled, cfg.multi_query_n, rt.config.llm
                ),
                cut=cut,
            )
        except TenantLeakError:  # never a partial answer: the call fails, and is on record
            with contextlib.suppress(Exception):
                self.auditor.record(ctx, "tenant_leak", None, {"operation": op})
            raise
        ctx.usage.add_tokens(response.tokens_used)
        return response

    def recall_as_pack(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> ContextPack:
        """``recall`` as a frozen, JSON-serialisable pack; ``pack.render_prompt()`` for the LLM.

        Raises what ``recall`` raises (``ValidationError``, ``AccessDenied``).
        """
        response = self.recall(
            query, as_of=as_of, time_window=time_window, token_budget=token_budget, context=context
        )
        return ContextPack.from_response(response)

    # governance -------------------------------------------------------------------------------
    def set_quota(
        self,
        user: str | None = None,
        *,
        daily_writes: int | None,
        user_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Sets the tenant's writes per UTC day (None removes the limit); audited.

        ``user_id=`` is Attestor's name for ``user``. Raises ``AccessDenied`` (FORGET needed,
        own tenant only) and ``ValidationError`` when neither or two different subjects are
        given, or the limit is not a positive integer.
        """
        user = subject(user, user_id, "user_id", "set_quota")
        ctx = self._guarded(context, "set_quota", user)
        limit = gov_quotas.check_limit(daily_writes)
        return gov_quotas.set_quota(self.runtime, self.auditor, ctx, user, limit)

    def quota_status(
        self, user: str | None = None, *, context: AgentContext | None = None
    ) -> dict[str, Any]:
        """Limit, writes used today (UTC) and when the counter resets.

        Raises ``AccessDenied`` for another tenant or without READ.
        """
        base = context or self.default_context
        ctx = self._guarded(context, "quota_status", base.tenant if user is None else user)
        return gov_quotas.quota_status(self.runtime, ctx.tenant if user is None else user)

    def export_user(
        self,
        user: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Everything held about tenant ``user`` (subject-access request), JSON-ready.

        ``external_id=`` is Attestor's name for ``user``. Raises ``AccessDenied`` (FORGET
        needed; own tenant only), ``ValidationError`` when neither or two different subjects
        are given, and ``StoreError``.
        """
        user = subject(user, external_id, "external_id", "export_user")
        ctx = self._guarded(context, "export_user", user)
        return gov_export.export_user(self.runtime, self.auditor, ctx, user)

    def import_user(
        self, data: dict[str, Any], *, context: AgentContext | None = None
    ) -> dict[str, int]:
        """Restores an ``export_user`` result into the context's tenant, which must be empty.

        Raises ``AccessDenied`` (FORGET needed), ``ValidationError`` for a malformed export
        and ``ConflictError`` when the tenant already holds data; nothing is imported then.
        """
        ctx = self._guarded(context, "import_user")
        return gov_export.import_user(self.runtime, self.auditor, ctx, data)

    def purge_user(
        self,
        user: str | None = None,
        reason: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> gov_purge.PurgeReport:
        """GDPR erasure of tenant ``user``; check ``report.ok`` (a partial purge is a failure).

        ``external_id=`` is Attestor's name for ``user``. Raises ``AccessDenied`` (FORGET
        needed; own tenant only) and ``ValidationError`` without a subject or a reason; a
        store failure is reported in the report, not raised.
        """
        user = subject(user, external_id, "external_id", "purge_user")
        ctx = self._guarded(context, "purge_user", user)
        why = gov_purge.check_reason(reason)
        report = gov_purge.purge_user(self.runtime, self.auditor, ctx, user, why)
        reembed_core.drop_staged(reembed_core.default_staging_path(self.config), user)
        return report

    def verify_audit_chain(
        self,
        user: str | None = None,
        *,
        anchor: tuple[int, str] | None = None,
        context: AgentContext | None = None,
    ) -> gov_audit.ChainReport:
        """Walks the tenant's audit chain; ``anchor`` is a (seq, hash) saved outside the store.

        Problems are reported, not raised; raises ``AccessDenied`` for another tenant and
        ``ValidationError`` for a malformed anchor.
        """
        base = context or self.default_context
        tenant = base.tenant if user is None else user
        self._guarded(context, "verify_audit_chain", tenant)
        return gov_audit.verify_chain(
            self.store,
            tenant,
            audit_log.chain_hash,
            audit_log.GENESIS,
            anchor=gov_audit.check_anchor(anchor),
            signatures=None if self.signer is None else self.signer.verify_audit,
        )

    def audit_page(
        self,
        *,
        before_seq: int | None = None,
        limit: int = 100,
        context: AgentContext | None = None,
    ) -> gov_audit.AuditPage:
        """``limit`` chain entries before ``before_seq`` (the newest without it), newest first,
        each checked against its hash and its link to the entry before it.

        Costs the same at any chain length; ``verify_audit_chain`` checks the whole chain and
        the rows. Raises ``AccessDenied`` without READ and ``ValidationError`` for a bad limit
        or a ``before_seq`` that is not a positive integer.
        """
        ctx = self._guarded(context, "audit_page")
        return gov_audit.chain_page(
            self.store,
            ctx.tenant,
            audit_log.chain_hash,
            audit_log.GENESIS,
            before_seq=gov_audit.check_before_seq(before_seq),
            limit=check_limit(limit, maximum=1000),
        )

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> gov_audit.AuditEntries:
        """Audit entries about forgotten, purged, retained-away or compacted data, newest first.

        Raises ``AccessDenied`` without READ and ``ValidationError`` for a bad limit.
        """
        ctx = self._guarded(context, "deletion_audit_log")
        return gov_audit.deletion_log(self.store, ctx.tenant, check_limit(limit))

    def apply_retention(
        self, policies: Any = None, *, dry_run: bool = False, context: AgentContext | None = None
    ) -> gov_retention.RetentionReport:
        """Runs retention policies (default: ``config.retention``); dry_run only lists.

        Raises ``AccessDenied`` (FORGET needed) and ``ValidationError`` for malformed
        policies; a policy that fails is reported per policy in the report.
        """
        ctx = self._guarded(context, "apply_retention")
        parsed = gov_retention.load_policies(
            self.config.retention if policies is None else policies
        )
        return gov_retention.apply_retention(self.runtime, self.auditor, ctx, parsed, bool(dry_run))

    def compact(
        self,
        *,
        older_than: str | int | float,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Physically removes rows archived more than ``older_than`` ago ('30d', '12h', days).

        Raises ``AccessDenied`` (FORGET needed), ``ValidationError`` for a bad age and
        ``StoreError`` (after auditing the failed attempt).
        """
        ctx = self._guarded(context, "compact")
        return gov_compact.compact(self.runtime, self.auditor, ctx, older_than, bool(dry_run))

    def reembed(
        self,
        *,
        batch_size: int = 256,
        progress: reembed_core.Progress | None = None,
        staging_path: str | Path | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Moves the tenant's vectors to this memory's embedder, in place (orchestrator).

        Resumable: new vectors are staged beside the store first, then swapped with the
        tenant's embedding space in one transaction; nothing a row asserts and no
        transaction time changes (see core/reembed.py for what ``as_of`` replay means
        across the change). ``progress(done, total)`` is called after each batch.
        Raises ``AccessDenied`` below orchestrator, ``ValidationError`` for a bad
        batch size, ``ConflictError`` if writers kept changing the tenant (run again).
        """
        ctx = self._guarded(context, "reembed")
        path = reembed_core.staging_path(self.config, staging_path)
        return reembed_core.reembed(
            self.runtime, self.auditor, ctx, path, batch_size=batch_size, progress=progress
        )

    def verify_memory(self, memory_id: str, *, context: AgentContext | None = None) -> bool:
        """True when the memory's Ed25519 signature matches its current content.

        Raises ``ValidationError`` when signing is off, ``NotFoundError`` for an unknown id.
        """
        ctx = self._guarded(context, "verify_memory")
        return gov_provenance.verify_memory(self.runtime, ctx, check_id(memory_id))

    def verify_all(self, *, context: AgentContext | None = None) -> dict[str, Any]:
        """Checks every stored version's signature; names the ids that fail or are unsigned.

        Raises ``ValidationError`` when signing is off and ``AccessDenied`` without READ.
        """
        ctx = self._guarded(context, "verify_all")
        return gov_provenance.verify_all(self.runtime, ctx)

    # conversations ----------------------------------------------------------------------------
    def ingest_round(
        self, turn: Turn | dict[str, Any], *, context: AgentContext | None = None
    ) -> IngestResult:
        """Stores a conversation round as an episode, then extracts and resolves its facts.

        User and assistant facts are extracted separately; each fact becomes one
        ADD / UPDATE / INVALIDATE / NOOP decision with the episode as evidence,
        applied atomically through the same write path as ``add``. Raises
        ``ValidationError`` for a malformed turn and what ``add`` raises.
        """
        from attestor_arango.ingest import backends_for, ingest_round

        ctx = self._ctx(context, Permission.WRITE, "ingest_round")
        if self.ingest_backends is None:
            self.ingest_backends = backends_for(self.config)
        return ingest_round(
            self.runtime, self.auditor, self.writer, turn, ctx, backends=self.ingest_backends
        )

    def add_turns(
        self,
        turns: Sequence[ConversationTurn | dict[str, Any]],
        *,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Stores conversation turns as they happen, one verbatim memory each, in order.

        Each turn (``speaker``, ``text``, optional ``session_id``, ``timestamp``,
        ``metadata``) keeps its speaker as entity, its session and its message time
        as ``valid_from``; the library links it to the turn it replies to and the
        speakers of a session to each other, and ``recall`` uses both by itself
        (see ingest/conversation.py). Raises ``ValidationError`` for a malformed turn
        (then nothing is stored) and what ``add`` raises.
        """
        ctx = self._ctx(context, Permission.WRITE, "add_turns")
        return add_turns(self.runtime, self.writer, ctx, turns)

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        """Re-reads the ``limit`` most recent episodes (with ``llm.consolidation_model`` if set).

        It re-resolves facts and flags no contradictions: ``reflect`` is the step that
        flags them (``contradictions_for_review``), never resolving them. Raises
        ``AccessDenied`` without WRITE, ``ValidationError`` for a bad limit, and
        ``LLMError`` when a configured model fails.
        """
        from attestor_arango.ingest.consolidation import consolidate

        ctx = self._ctx(context, Permission.WRITE, "consolidate")
        return consolidate(self.runtime, self.auditor, self.writer, ctx, limit=limit)

    def reflect(
        self,
        user: str | None = None,
        *,
        min_episodes: int = 3,
        store: bool = True,
        context: AgentContext | None = None,
    ) -> Reflection:
        """Stable preferences and constraints, changed beliefs, contradictions for human review.

        Nothing read is changed: contradictions are flagged, never resolved. With
        ``store`` the reflection is kept as a memory of category ``reflection``. Raises
        ``AccessDenied`` (WRITE with ``store``, else READ) and ``ValidationError``.
        """
        from attestor_arango.ingest.reflection import reflect

        permission = Permission.WRITE if store else Permission.READ
        ctx = self._ctx(context, permission, "reflect")
        return reflect(
            self.runtime,
            self.auditor,
            self.writer,
            ctx,
            user=user,
            min_episodes=min_episodes,
            store=store,
        )
