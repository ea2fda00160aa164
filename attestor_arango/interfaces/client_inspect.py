"""``MemoryClient``'s calls that inspect: the audit chain page, the recall explainer and
recorded recalls. A base class of ``MemoryClient`` (kept apart only so neither module
outgrows a reading); each method forwards to the REST route of the same name.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.context import AgentContext
from attestor_arango.models import RecallExplanation, RecordedRecall
from attestor_arango.reports import AuditPage
from attestor_arango.validation import TimeInput


class InspectionCalls:
    """Read-only calls; ``_call`` is ``MemoryClient``'s (one request per call)."""

    def _call(self, op: str, given: dict[str, Any]) -> Any:
        raise NotImplementedError  # MemoryClient's transport

    def explain_recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallExplanation:
        """``AgentMemory.explain_recall`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("explain_recall", locals())

    def recall_trace(
        self, recall_id: str, *, context: AgentContext | None = None
    ) -> RecordedRecall:
        """``AgentMemory.recall_trace`` over HTTP: the server's typed error (``NotFoundError``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("recall_trace", locals())

    def audit_page(
        self,
        *,
        before_seq: int | None = None,
        limit: int = 100,
        context: AgentContext | None = None,
    ) -> AuditPage:
        """``AgentMemory.audit_page`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("audit_page", locals())
