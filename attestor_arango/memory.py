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
from attestor_arango.ingest.pipeline import Backends
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
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Store
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
        entity: str | None = KEEP,
        category: str | None = KEEP,
        tags: TagsInput = None,
        confidence: float | None = None,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """Writes a new version (omitted fields kept) and closes the old one.

        Raises ``NotFoundError`` for an unknown id, ``ConflictError`` when the memory is no
        longer current (the message names its current version), and what ``add`` raises.
        """
        ctx = self._ctx(context, Permission.WRITE, "update")
        memory_id = check_id(memory_id)
        changes = check_changes(
            self.config.max_content_chars,
            content,
            entity,
            category,
            tags,
            confidence,
            valid_from,
            valid_until,
            metadata,
        )
        return self.writer.update(ctx, memory_id, changes)

    def forget(
        self, memory_id: str, *, reason: str | None = None, context: AgentContext | None = None
    ) -> Memory:
        """Archives a memory (closed in transaction time; the row stays for replay).

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
        """One memory as it was at ``as_of`` (default now), by its id or an unambiguous
        start or end of it (4+ characters); with ``time_window`` only if its event interval
        overlaps it. Raises ``NotFoundError``, or ``ValidationError`` naming the ids a
        short form matches when it matches several.
        """
        ctx = self._ctx(context, Permission.READ, "get")
        rt, scope = self.runtime, self.runtime.scope(ctx)
        memory_id = reads.resolve_id(rt, scope, check_id(memory_id))
        return reads.get_memory(rt, scope, memory_id, rt.view(as_of, time_window))

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

        Raises ``ValidationError`` for an unknown status, a bad window or a future ``as_of``.
        """
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
        """``list`` a page at a time, with the total and ``next_cursor``; every page reads at
        the first page's moment, so writes in between never shift or repeat rows.

        Pass the same filters with the cursor. Raises ``ValidationError`` for a damaged
        cursor or one made for other filters, and what ``list`` raises.
        """
        ctx = self._ctx(context, Permission.READ, "list_page")
        listing = reads.Listing(entity, category, tags, namespace, status, time_window, as_of)
        return pages.list_page(self.runtime, ctx, listing, check_limit(limit), cursor)

    def get_episode(self, episode_id: str, *, context: AgentContext | None = None) -> Episode:
        """A conversation round as stored (the evidence of the facts extracted from it), in
        the context's namespace; raises ``NotFoundError``."""
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
        """Keyword (BM25) search with the filters of ``list`` (applied before any cut); no
        query: filtered search. Raises ``ValidationError`` for a blank query string, an
        unknown status or a bad window.
        """
        ctx = self._ctx(context, Permission.READ, "search")
        query, limit = reads.check_query(query), check_limit(limit, maximum=1000)
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
        """Every version ever stored about an entity, closed ones included; with
        ``time_window`` only those whose event interval overlaps it.

        Raises ``ValidationError`` without an entity, ``AccessDenied`` without READ.
        """
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
        """The active facts (optionally of one entity and category) at ``as_of``, as ``list``
        with ``time_window``. The verbatim rounds ``ingest_round`` keeps (category
        ``episode``) are records, not facts: left out unless ``category="episode"`` asks.

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
        """The store's health report (without its location) plus the embedder; needs no
        context. Never raises for an unhealthy store (the report says so); ``StoreError``
        only when the store cannot be asked at all.
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
        """``recall`` (``explanation.response``, the same single ranking) plus the ranked
        results its token budget cut, with their places (``explanation.cut``).

        Raises what ``recall`` raises (``ValidationError``, ``AccessDenied``).
        """
        ctx = self._ctx(context, Permission.READ, "explain_recall")
        rt, auditor = self.runtime, self.auditor
        return recalls.explain(rt, auditor, ctx, query, as_of, time_window, token_budget)

    def recall_trace(
        self, recall_id: str, *, context: AgentContext | None = None
    ) -> RecordedRecall:
        """A recorded recall of the caller's tenant and namespace: its inputs, the result
        ids and its pipeline steps (replay it with ``recall`` at the recorded ``as_of``).

        Raises ``ValidationError`` for a malformed id, ``AccessDenied`` without READ and
        ``NotFoundError`` when tracing is off or no such recall is recorded in the scope.
        """
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
        ctx = self._guarded(context, "quota_status", user)
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
    ) -> PurgeReport:
        """GDPR erasure of tenant ``user``; check ``report.ok`` (a partial purge is a failure).

        ``external_id=`` is Attestor's name for ``user``. Raises ``AccessDenied`` (FORGET
        needed; own tenant only) and ``ValidationError`` without a subject or a reason; a
        store failure is reported in the report, not raised.
        """
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
        """Walks the tenant's audit chain; ``anchor`` is a (seq, hash) saved outside the store.

        Problems are reported, not raised; raises ``AccessDenied`` for another tenant and
        ``ValidationError`` for a malformed anchor.
        """
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
        each checked against its hash and its link; the same cost at any chain length.

        Raises ``AccessDenied`` without READ and ``ValidationError`` for a bad limit or a
        ``before_seq`` that is not a positive integer.
        """
        ctx = self._guarded(context, "audit_page")
        return trail.page(self.runtime, ctx.tenant, before_seq, limit)

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> AuditEntries:
        """Audit entries about forgotten, purged, retained-away or compacted data, newest first.

        Raises ``AccessDenied`` without READ and ``ValidationError`` for a bad limit.
        """
        ctx = self._guarded(context, "deletion_audit_log")
        return trail.deletions(self.runtime, ctx.tenant, limit)

    def apply_retention(
        self, policies: Any = None, *, dry_run: bool = False, context: AgentContext | None = None
    ) -> RetentionReport:
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
        """Moves the tenant's vectors to this memory's embedder, in place, resumably (staged
        beside the store, swapped in one transaction; see core/reembed.py); ``progress(done,
        total)`` after each batch. Raises ``AccessDenied`` below orchestrator,
        ``ValidationError`` for a bad batch size, ``ConflictError`` if writers kept changing
        the tenant (run again).
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
        """Stores a conversation round as an episode, then extracts its user and assistant
        facts and resolves each into one ADD / UPDATE / INVALIDATE / NOOP decision, applied
        atomically through ``add``'s write path. Raises ``ValidationError`` for a malformed
        turn and what ``add`` raises.
        """
        from attestor_arango.ingest import backends_for, ingest_round

        ctx = self._ctx(context, Permission.WRITE, "ingest_round")
        if self.ingest_backends is None:
            self.ingest_backends = backends_for(self.config)
        rt, backends = self.runtime, self.ingest_backends
        return ingest_round(rt, self.auditor, self.writer, turn, ctx, backends=backends)

    def add_turns(
        self,
        turns: Sequence[ConversationTurn | dict[str, Any]],
        *,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Stores conversation turns as they happen, one verbatim memory each, in order: the
        speaker as entity, the message time as ``valid_from``, linked to the turn it
        replies to (see ingest/conversation.py). Raises ``ValidationError`` for a malformed
        turn (then nothing is stored) and what ``add`` raises.
        """
        ctx = self._ctx(context, Permission.WRITE, "add_turns")
        return add_turns(self.runtime, self.writer, ctx, turns)

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        """Re-reads the ``limit`` most recent episodes (with ``llm.consolidation_model`` if
        set) and re-resolves their facts; ``reflect`` flags contradictions. Raises
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
        """Stable preferences and constraints, changed beliefs, and contradictions flagged
        for human review (never resolved); with ``store`` kept as a memory of category
        ``reflection``. Raises ``AccessDenied`` (WRITE with ``store``, else READ) and
        ``ValidationError``.
        """
        from attestor_arango.ingest.reflection import reflect

        ctx = self._ctx(context, Permission.WRITE if store else Permission.READ, "reflect")
        rt, auditor, writer = self.runtime, self.auditor, self.writer
        return reflect(rt, auditor, writer, ctx, user=user, min_episodes=min_episodes, store=store)
