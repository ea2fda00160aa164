"""Recall as ``AgentMemory`` serves it: the runtime's parts handed to the pipeline.

``retrieval/`` ranks; this module adds what needs the caller and the audit chain: the
context's token budget as a ceiling, the tenant's scope and view, the configured tracer
and query expanders, the usage counter, and the audit entry of a tenant leak (the call
fails whole and is on record; a partial answer is never returned).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager

from attestor_arango.context import AgentContext
from attestor_arango.core import trace_paths
from attestor_arango.core.audit import Auditor, audit_seq, purge_began_since
from attestor_arango.core.linefile import made_like_store
from attestor_arango.core.recall_key import recall_key
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import TenantLeakError, ValidationError
from attestor_arango.models import CutResult, RecallExplanation, RecallResponse, RecordedRecall
from attestor_arango.retrieval import trace_lookup
from attestor_arango.retrieval.lanes import expanders_for
from attestor_arango.retrieval.pipeline import recall as run_recall
from attestor_arango.retrieval.trace import erase_tenant, shared_tracer
from attestor_arango.scope import Scope
from attestor_arango.validation import TimeInput, Window, check_query_size

log = logging.getLogger(__name__)


def _reads_together(store: object) -> AbstractContextManager[None]:
    """The backend's ``reads_together()`` when it has one, else nothing: the reads of one
    request then share one check of what other writers committed (the embedded store:
    ``SQLiteStore.reads_together``, one ``PRAGMA data_version`` a recall instead of
    six). Not part of the Store contract, so it is looked up by name."""
    together: Callable[[], AbstractContextManager[None]] | None
    together = getattr(store, "reads_together", None)
    return contextlib.nullcontext() if together is None else together()


def _erased(rt: Runtime, scope: Scope, began: int) -> None:
    """After a traced recall: a purge of the tenant running or begun since ``began`` may have
    deleted the trace files before the recall wrote its last events, so they are erased
    again (``purge_began_since``; a recall in another process left the purged tenant a
    trace file of its rows' ids)."""
    if purge_began_since(rt.store, scope, began):
        erase_tenant(rt.config.trace, scope.tenant)


def _erased_after(rt: Runtime, scope: Scope, began: int, error: BaseException) -> None:
    """``_erased`` after the recall raised ``error``: ``error`` is what the caller must see,
    so a failure of the check (its audit read) is logged and noted on ``error``, never
    raised in its place."""
    try:
        _erased(rt, scope, began)
    except Exception as failed:
        why = repr(failed)  # a message's control characters escaped, as a log line needs
        log.warning("a traced recall failed and its check for a purge begun meanwhile failed "
                    "too: %s", why)  # fmt: skip
        error.add_note(f"the check for a purge begun during this traced recall failed: {why}")


def recall(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    op: str,
    query: str,
    as_of: TimeInput | None,
    time_window: Window,
    token_budget: int | None,
    cut: list[CutResult] | None = None,
) -> RecallResponse:
    """Ranked, budget-packed memories; ``cut`` (when given) receives what the budget left.

    ``op`` names the public method in a tenant-leak audit entry. Raises ``ValidationError``
    for an empty query or one that is not valid text, a bad budget, window or ``as_of``,
    and ``TenantLeakError`` (audited).
    """
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query is empty; pass what you want to recall")
    # the response echoes it: it must encode as JSON does
    check_query_size(query, rt.config.max_content_chars)
    budget = ctx.budget_for(token_budget)  # a ceiling: a caller can only ask for less
    cfg = rt.retrieval_config
    scope = rt.scope(ctx)
    trace = rt.config.trace
    tracer = shared_tracer(trace, made_like_store(rt.config) if trace.enabled else None)
    if tracer is not None and not trace_paths.record(rt.config, tracer.path):
        tracer = None  # a trace no purge would find is not written
    # traced: where the tenant's audit chain stood before the first event (``_erased``)
    began = audit_seq(rt.store, scope) if tracer is not None else 0
    try:
        view = rt.view(as_of, time_window)  # first: it may wait for a write (``settle``)
        # after every check of the arguments: a refused recall keeps no key (it may write)
        id_key = recall_key(rt.store, rt.config, rt.ids, scope.tenant)  # ids confirm no guess
        with _reads_together(rt.store):  # whose commit the caches then see
            response = run_recall(
                rt.store,
                rt.embedder,
                scope,
                query.strip(),
                view,
                budget,
                cfg,
                tracer=tracer,
                expanders=expanders_for(
                    cfg.hyde_enabled, cfg.multi_query_enabled, cfg.multi_query_n, rt.config.llm
                ),
                cut=cut,
                id_key=id_key,
            )
    except BaseException as error:
        if isinstance(error, TenantLeakError):  # never a partial answer: the call fails, on record
            with contextlib.suppress(Exception):
                auditor.record(ctx, "tenant_leak", None, {"operation": op})
        if tracer is not None:
            _erased_after(rt, scope, began, error)
        raise
    if tracer is not None:
        _erased(rt, scope, began)
    ctx.usage.add_tokens(response.tokens_used)
    return response


def explain(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    query: str,
    as_of: TimeInput | None,
    time_window: Window,
    token_budget: int | None,
) -> RecallExplanation:
    """``recall`` and what its budget cut, from the one ranking; raises what ``recall`` does."""
    cut: list[CutResult] = []
    response = recall(
        rt, auditor, ctx, "explain_recall", query, as_of, time_window, token_budget, cut
    )
    return RecallExplanation(response=response, cut=tuple(cut))


def recorded(rt: Runtime, scope: Scope, recall_id: object) -> RecordedRecall:
    """A recorded recall of ``scope`` by its id, from the configured trace file.

    Raises ``ValidationError`` for a malformed id and ``NotFoundError`` when tracing is off
    or the scope has no such recall.
    """
    rid = trace_lookup.check_recall_id(recall_id)
    trace = rt.config.trace
    return trace_lookup.find_recall(trace.path if trace.enabled else None, scope, rid)
