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
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from attestor_arango.clock import Clock, TickClock
from attestor_arango.config import Config
from attestor_arango.context import AgentContext, Permission
from attestor_arango.core import pages, reads
from attestor_arango.core import recall as recalls
from attestor_arango.core import reembed as reembed_core
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Part, Replaceable, Runtime, open_runtime
from attestor_arango.core.signing import Signer
from attestor_arango.core.writes import KEEP, Writer, check_changes
from attestor_arango.embeddings import Embedder
from attestor_arango.governance import compact as gov_compact
from attestor_arango.governance import export as gov_export
from attestor_arango.governance import provenance as gov_provenance
from attestor_arango.governance import purge as gov_purge
from attestor_arango.governance import quotas as gov_quotas
from attestor_arango.governance import retention as gov_retention
from attestor_arango.governance import trail
from attestor_arango.governance.access import caller, guard, require, subject
from attestor_arango.ids import IdSource
from attestor_arango.ingest.conversation import ConversationTurn, add_turns
from attestor_arango.ingest.model import IngestResult, Turn
from attestor_arango.ingest.pipeline import Backends, ConfiguredBackends
from attestor_arango.models import (
    AuditEntry,
    Episode,
    Memory,
    MemoryPage,
    RecallExplanation,
    RecallResponse,
    RecordedRecall,
    Stats,
)
from attestor_arango.reports import (
    AuditEntries,
    AuditPage,
    ChainReport,
    ConsolidationReport,
    PurgeReport,
    Reflection,
    RetentionReport,
)
from attestor_arango.retrieval import RetrievalConfig
from attestor_arango.retrieval.pack import ContextPack
from attestor_arango.store.protocol import Store
from attestor_arango.validation import (
    TagsInput,
    TimeInput,
    Window,
    check_confidence,
    check_content,
    check_flag,
    check_id,
    check_interval,
    check_label,
    check_limit,
    check_metadata,
    check_offset,
    check_reason,
    check_tags,
)


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
        self.default_context = caller(context, AgentContext())  # checked before the store opens
        self._set_runtime(
            open_runtime(path, config=config, store=store, embedder=embedder, clock=clock, ids=ids)
        )
        # the extractor and resolver of ingest_round; None: the config's LLM, else the rules
        self.ingest_backends: Backends | None = None
        self._configured = ConfiguredBackends()  # built again when ``config.llm`` changes

    # the runtime's parts, read as attributes; store, signer and retrieval_config replaceable
    config: Part[Config] = Part()
    embedder: Part[Embedder] = Part()
    clock: Part[TickClock] = Part()
    ids: Part[IdSource] = Part()
    store: Replaceable[Store] = Replaceable()
    signer: Replaceable[Signer | None] = Replaceable()
    retrieval_config: Replaceable[RetrievalConfig] = Replaceable()

    def _set_runtime(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.auditor = Auditor(runtime)
        self.writer = Writer(runtime, self.auditor)

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

    def _ctx(self, context: AgentContext | None, permission: Permission, op: str) -> AgentContext:
        """The caller's context, after one permission check (a refusal is audited once)."""
        return require(self.auditor, caller(context, self.default_context), permission, op)

    def _guarded(
        self, context: AgentContext | None, op: str, subject: str | None = None
    ) -> AgentContext:
        """The context of a governance operation, checked by ``governance.access.guard``."""
        return guard(self.auditor, caller(context, self.default_context), op, subject)

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
        """Stores a fact, superseding an active one of the same entity and category. Raises
        ``AccessDenied``, ``ValidationError``, ``QuotaExceededError``,
        ``EmbeddingMismatchError``, ``NotFoundError`` (a ``source_episode_id`` that names no
        episode of the context's scope) or ``StoreError``; nothing is stored when it raises."""
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
            cited_by_caller=True,
        )

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        entity: str | None = KEEP,
        category: str | None = KEEP,
        tags: TagsInput = None,
        confidence: float | None = None,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Writes a new version (omitted fields kept) and closes the old one; when the fields
        given are the ones it already has, returns it and writes nothing (no version, audit
        entry or write counted). The id may be short, as for ``get``. Raises ``NotFoundError``,
        ``ConflictError`` when it is no longer current (the message names its current
        version), and what ``add`` raises (``ValidationError``: an ambiguous short id too)."""
        ctx = self._ctx(context, Permission.WRITE, "update")
        changes = check_changes(
            self.config.max_content_chars,
            content=content,
            entity=entity,
            category=category,
            tags=tags,
            confidence=confidence,
            valid_from=valid_from,
            valid_until=valid_until,
            metadata=metadata,
        )
        memory_id = reads.resolve_id(self.runtime, self.runtime.scope(ctx), check_id(memory_id))
        return self.writer.update(ctx, memory_id, changes)

    def forget(
        self, memory_id: str, *, reason: str | None = None, context: AgentContext | None = None
    ) -> Memory:
        """Archives a memory (closed in transaction time; the row stays for replay); the id
        may be short, as for ``get``. Raises ``AccessDenied`` (FORGET needed),
        ``NotFoundError``, ``ValidationError`` (ambiguous id, a reason that is not text of
        at most 2000 characters), ``ConflictError`` (closed)."""
        ctx = self._ctx(context, Permission.FORGET, "forget")
        why = check_reason(reason, "reason")
        memory_id = reads.resolve_id(self.runtime, self.runtime.scope(ctx), check_id(memory_id))
        return self.writer.forget(ctx, memory_id, why)

    # reads ------------------------------------------------------------------------------------
    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """One memory as at ``as_of`` (default now), by id or an unambiguous start or end of
        it (4+ characters); with ``time_window`` only if its event interval overlaps it.
        Raises ``NotFoundError``, or ``ValidationError`` naming the ids a short id matches."""
        ctx = self._ctx(context, Permission.READ, "get")
        rt, scope = self.runtime, self.runtime.scope(ctx)
        view = rt.view(as_of, time_window)
        memory_id = reads.resolve_id(rt, scope, check_id(memory_id), view.as_of)
        return reads.get_memory(rt, scope, memory_id, view)

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
        or an ``as_of`` in the future."""
        ctx = self._ctx(context, Permission.READ, "list")
        listing = reads.Listing(entity, category, tags, namespace, status, time_window, as_of)
        limit, offset = check_limit(limit), check_offset(offset)
        return reads.list_matching(self.runtime, ctx, listing, limit, offset)

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
        Raises ``ValidationError`` for an unknown status, a bad window or a future ``as_of``."""
        ctx = self._ctx(context, Permission.READ, "count")
        listing = reads.Listing(entity, category, tags, namespace, status, time_window, as_of)
        return reads.count_matching(self.runtime, ctx, listing)

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
        """``list`` a page at a time with its total and ``next_cursor`` (pass it with the same
        filters); every page reads at the first page's moment, so writes never shift rows.
        Raises ``ValidationError`` for a damaged or foreign cursor, and what ``list`` raises."""
        ctx = self._ctx(context, Permission.READ, "list_page")
        listing = reads.Listing(entity, category, tags, namespace, status, time_window, as_of)
        return pages.list_page(self.runtime, ctx, listing, check_limit(limit), cursor)

    def get_episode(self, episode_id: str, *, context: AgentContext | None = None) -> Episode:
        """A conversation round as stored (its facts' evidence); raises ``NotFoundError``."""
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
        """Keyword (BM25) search with ``list``'s filters (applied before any cut); no query:
        filtered search. Raises ``ValidationError`` for a blank query, an unknown status or
        a bad window."""
        ctx = self._ctx(context, Permission.READ, "search")
        query = reads.check_query(query, self.config.max_content_chars)
        limit = check_limit(limit, maximum=1000)
        listing = reads.Listing(entity, category, tags, namespace, status, time_window, as_of)
        return reads.search_matching(self.runtime, ctx, query, listing, limit)

    def timeline(
        self,
        entity: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Every version stored about an entity, closed ones included (with ``time_window``:
        overlapping it). Raises ``ValidationError`` without an entity, ``AccessDenied``."""
        ctx = self._ctx(context, Permission.READ, "timeline")
        name, scope = check_label(entity, "entity"), self.runtime.scope(ctx)
        return reads.timeline(self.runtime, scope, name, as_of, time_window)

    def current_facts(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """The active facts at ``as_of``, filtered as ``list``; the rounds ``ingest_round`` keeps
        are left out unless ``category="episode"``. Raises ``ValidationError``, ``AccessDenied``."""
        ctx = self._ctx(context, Permission.READ, "current_facts")
        listing = reads.Listing(entity, category, time_window=time_window, as_of=as_of)
        return reads.current_facts(self.runtime, ctx, listing)

    def stats(self, *, context: AgentContext | None = None) -> Stats:
        """Row counts of the context's scope and the tenant's embedding space. Raises
        ``AccessDenied`` without READ and ``StoreError`` when the store fails."""
        ctx = self._ctx(context, Permission.READ, "stats")
        return reads.stats(self.runtime, self.runtime.scope(ctx))

    def health(self) -> dict[str, Any]:
        """The store's health report (without its location) plus the embedder; no context.
        An unhealthy store is reported; ``StoreError`` only when it cannot be asked at all."""
        return reads.health(self.runtime)

    def audit_log(
        self, *, limit: int = 100, after_seq: int = 0, context: AgentContext | None = None
    ) -> builtins.list[AuditEntry]:
        """The tenant's audit chain, oldest first. Raises ``AccessDenied`` without READ and
        ``ValidationError`` for a bad limit or ``after_seq``."""
        ctx = self._ctx(context, Permission.READ, "audit_log")
        return trail.entries(self.runtime, ctx.tenant, limit, after_seq)

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
        """Ranked, budget-packed memories for a query; no LLM, no writes. Raises
        ``ValidationError`` for an empty query, one holding a lone surrogate (not text) or
        a non-positive budget; a failing lane
        degrades the answer and is named in ``response.errors``."""
        ctx = self._ctx(context, Permission.READ, "recall")
        rt, auditor = self.runtime, self.auditor
        return recalls.recall(rt, auditor, ctx, "recall", query, as_of, time_window, token_budget)

    def explain_recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallExplanation:
        """``recall`` (``.response``) plus the ranked results its budget cut, with their
        places (``.cut``), from one ranking. Raises ``ValidationError``, ``AccessDenied``."""
        ctx = self._ctx(context, Permission.READ, "explain_recall")
        rt, auditor = self.runtime, self.auditor
        return recalls.explain(rt, auditor, ctx, query, as_of, time_window, token_budget)

    def recall_trace(
        self, recall_id: str, *, context: AgentContext | None = None
    ) -> RecordedRecall:
        """A recorded recall of the caller's scope: inputs, result ids, pipeline steps (replay
        it with ``recall`` at its ``as_of``). Raises ``ValidationError``, ``AccessDenied``,
        and ``NotFoundError`` when tracing is off or the scope has no such recall."""
        ctx = self._ctx(context, Permission.READ, "recall_trace")
        return recalls.recorded(self.runtime, self.runtime.scope(ctx), recall_id)

    def recall_as_pack(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: Window = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> ContextPack:
        """``recall`` as a frozen, JSON-serialisable pack (``render_prompt()`` for the LLM).
        Raises what ``recall`` raises (``ValidationError``, ``AccessDenied``)."""
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
        """Sets the tenant's writes per UTC day (None: no limit); audited. ``user_id=`` is
        Attestor's ``user``. Raises ``AccessDenied`` (FORGET, own tenant) and
        ``ValidationError`` for no or two different subjects or a negative limit (0 blocks)."""
        user = subject(user, user_id, "user_id", "set_quota")
        ctx = self._guarded(context, "set_quota", user)
        limit = gov_quotas.check_limit(daily_writes)
        return gov_quotas.set_quota(self.runtime, self.auditor, ctx, user, limit)

    def quota_status(
        self, user: str | None = None, *, context: AgentContext | None = None
    ) -> dict[str, Any]:
        """Limit, writes used today (UTC) and when the counter resets. Raises
        ``AccessDenied`` for another tenant or without READ."""
        ctx = self._guarded(context, "quota_status", user)
        return gov_quotas.quota_status(self.runtime, ctx.tenant if user is None else user)

    def export_user(
        self,
        user: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Everything held about tenant ``user`` (subject access), JSON-ready; ``external_id=``
        is Attestor's ``user``. Raises ``AccessDenied`` (FORGET, own tenant),
        ``ValidationError`` for no or two different subjects, and ``StoreError``."""
        user = subject(user, external_id, "external_id", "export_user")
        ctx = self._guarded(context, "export_user", user)
        return gov_export.export_user(self.runtime, self.auditor, ctx, user)

    def import_user(
        self, data: dict[str, Any], *, context: AgentContext | None = None
    ) -> dict[str, int]:
        """Restores an ``export_user`` result into the context's (empty) tenant. Raises
        ``AccessDenied`` (FORGET), ``ValidationError`` for a malformed export and
        ``ConflictError`` when the tenant holds data; nothing is imported then."""
        ctx = self._guarded(context, "import_user")
        return gov_export.import_user(self.runtime, self.auditor, ctx, data)

    def purge_user(
        self,
        user: str | None = None,
        reason: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> PurgeReport:
        """GDPR erasure of tenant ``user``; check ``report.ok`` (a store failure is reported,
        not raised). ``external_id=`` is Attestor's ``user``. Raises ``AccessDenied``
        (FORGET, own tenant) and ``ValidationError`` without a subject or a reason."""
        user = subject(user, external_id, "external_id", "purge_user")
        ctx = self._guarded(context, "purge_user", user)
        why = gov_purge.check_reason(reason)
        return gov_purge.purge_user(self.runtime, self.auditor, ctx, user, why)

    def verify_audit_chain(
        self,
        user: str | None = None,
        *,
        anchor: tuple[int, str] | None = None,
        context: AgentContext | None = None,
    ) -> ChainReport:
        """Walks the tenant's audit chain (``anchor``: a (seq, hash) kept outside the store);
        problems are reported. Raises ``AccessDenied``, ``ValidationError`` (bad anchor)."""
        ctx = self._guarded(context, "verify_audit_chain", user)
        return trail.verify(self.runtime, ctx.tenant if user is None else user, anchor)

    def audit_page(
        self,
        *,
        before_seq: int | None = None,
        limit: int = 100,
        context: AgentContext | None = None,
    ) -> AuditPage:
        """``limit`` chain entries before ``before_seq`` (default: the newest), newest first,
        each checked against its hash and link. Raises ``AccessDenied`` without READ and
        ``ValidationError`` for a bad limit or ``before_seq``."""
        ctx = self._guarded(context, "audit_page")
        return trail.page(self.runtime, ctx.tenant, before_seq, limit)

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> AuditEntries:
        """Audit entries about forgotten, purged, retained-away or compacted data, newest
        first. Raises ``AccessDenied`` without READ and ``ValidationError`` (bad limit)."""
        ctx = self._guarded(context, "deletion_audit_log")
        return trail.deletions(self.runtime, ctx.tenant, limit)

    def apply_retention(
        self, policies: Any = None, *, dry_run: bool = False, context: AgentContext | None = None
    ) -> RetentionReport:
        """Runs retention policies (default ``config.retention``; dry_run lists). Raises
        ``AccessDenied`` (FORGET) and ``ValidationError``; a failing policy is reported."""
        ctx = self._guarded(context, "apply_retention")
        parsed = gov_retention.load_policies(
            self.config.retention if policies is None else policies
        )
        dry = check_flag(dry_run, "dry_run")
        return gov_retention.apply_retention(self.runtime, self.auditor, ctx, parsed, dry)

    def compact(
        self,
        *,
        older_than: str | int | float,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Removes rows archived more than ``older_than`` ('30d', '12h', days) ago. Raises
        ``AccessDenied`` (FORGET), ``ValidationError`` (bad age), ``StoreError`` (audited)."""
        ctx = self._guarded(context, "compact")
        dry = check_flag(dry_run, "dry_run")
        return gov_compact.compact(self.runtime, self.auditor, ctx, older_than, dry)

    def reembed(
        self,
        *,
        batch_size: int = 256,
        progress: reembed_core.Progress | None = None,
        staging_path: str | Path | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Moves the tenant's vectors to this embedder, resumably (core/reembed.py). Raises
        ``AccessDenied`` below orchestrator, ``ValidationError`` (bad batch size),
        ``ConflictError`` if writers kept changing the tenant (run again)."""
        ctx = self._guarded(context, "reembed")
        path = reembed_core.staging_path(self.config, staging_path)
        return reembed_core.reembed(
            self.runtime, self.auditor, ctx, path, batch_size=batch_size, progress=progress
        )

    def verify_memory(self, memory_id: str, *, context: AgentContext | None = None) -> bool:
        """Attestor's bool: the signature matches the content (False: no match, no signature,
        no such memory); the id may be short. Raises ``SigningDisabled``, ``ValidationError``."""
        ctx = self._guarded(context, "verify_memory")
        return gov_provenance.verify_memory(self.runtime, ctx, check_id(memory_id))

    def verify_all(self, *, context: AgentContext | None = None) -> dict[str, Any]:
        """Checks every stored version's signature; names the ids that fail or are unsigned.
        Raises ``SigningDisabled`` when signing is off and ``AccessDenied`` without READ."""
        ctx = self._guarded(context, "verify_all")
        return gov_provenance.verify_all(self.runtime, ctx)

    # conversations ----------------------------------------------------------------------------
    def ingest_round(
        self, turn: Turn | dict[str, Any], *, context: AgentContext | None = None
    ) -> IngestResult:
        """Stores a round as an episode, then extracts its facts and resolves each (ADD /
        UPDATE / INVALIDATE / NOOP) through ``add``'s write path, atomically. Raises
        ``ValidationError`` for a malformed turn and what ``add`` raises."""
        from attestor_arango.ingest import ingest_round

        ctx = self._ctx(context, Permission.WRITE, "ingest_round")
        backends = self.ingest_backends or self._configured.of(self.config)
        return ingest_round(self.runtime, self.auditor, self.writer, turn, ctx, backends=backends)

    def add_turns(
        self,
        turns: Sequence[ConversationTurn | dict[str, Any]],
        *,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Stores turns as they happen, one verbatim memory each (ingest/conversation.py).
        Raises ``ValidationError`` for a malformed turn (nothing stored) and what ``add`` does."""
        ctx = self._ctx(context, Permission.WRITE, "add_turns")
        return add_turns(self.runtime, self.writer, ctx, turns)

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        """Re-resolves the facts of the ``limit`` newest episodes (``llm.consolidation_model``).
        Raises ``AccessDenied``, ``ValidationError`` (bad limit), ``LLMError`` (model failed)."""
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
        """Stable preferences, changed beliefs, contradictions flagged (never resolved); kept
        as a ``reflection`` memory with ``store``. Raises ``AccessDenied``, ``ValidationError``."""
        from attestor_arango.ingest.reflection import reflect

        store = check_flag(store, "store")
        ctx = self._ctx(context, Permission.WRITE if store else Permission.READ, "reflect")
        rt, auditor, writer = self.runtime, self.auditor, self.writer
        return reflect(rt, auditor, writer, ctx, user=user, min_episodes=min_episodes, store=store)
