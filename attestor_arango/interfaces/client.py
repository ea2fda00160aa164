"""MemoryClient: AgentMemory's methods over HTTP, with the same names, signatures and errors.

Each method only forwards its arguments (those that differ from the default)
along the route ``api.spec`` names for it, and turns the JSON result back into
the same model AgentMemory returns. A server-side error comes back as the same
typed exception (``NotFoundError``, ``AccessDenied``...). The ``context`` a call
passes selects an identity inside what the API key grants; the server refuses
anything wider.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import httpx

from attestor_arango.context import AgentContext
from attestor_arango.errors import ValidationError
from attestor_arango.ingest.model import IngestResult, Turn
from attestor_arango.interfaces.client_inspect import InspectionCalls
from attestor_arango.interfaces.wire import (
    build_request,
    open_http,
    read_response,
    transport_error,
)
from attestor_arango.models import (
    AuditEntry,
    Episode,
    Memory,
    MemoryPage,
    RecallResponse,
    Stats,
)
from attestor_arango.reports import (
    ChainReport,
    ConsolidationReport,
    PurgeReport,
    Reflection,
    RetentionReport,
)
from attestor_arango.retrieval.pack import ContextPack
from attestor_arango.validation import TimeInput

_UNSET: Any = object()  # "leave unchanged", as in AgentMemory.update
# aliases: inside the class body `list` names the method, not the builtin
Memories = list[Memory]
AuditEntries = list[AuditEntry]


class MemoryClient(InspectionCalls):
    """A remote AgentMemory. ``base_url`` like ``http://127.0.0.1:8080``."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        context: AgentContext | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url, self._http = open_http(httpx.Client, base_url, api_key, timeout, transport)
        self.default_context = context

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the HTTP connection pool; the client is unusable afterwards."""
        self._http.close()

    def reembed(
        self,
        *,
        batch_size: int = 256,
        progress: Any = None,
        staging_path: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Not over HTTP: re-embedding is a long job run beside the store."""
        raise ValidationError(
            "reembed runs where the store is, not through the REST service: run "
            "`attestor-arango reembed` (or AgentMemory.reembed()) on the server's host"
        )

    # -- plumbing -----------------------------------------------------------------
    def _call(self, op: str, given: dict[str, Any]) -> Any:
        method = getattr(MemoryClient, op)
        verb, path, request = build_request(method, op, given, self.default_context)
        try:
            response = self._http.request(verb, path, **request)
        except httpx.HTTPError as exc:
            raise transport_error(self.base_url, exc) from exc
        return read_response(op, method, response)

    # -- AgentMemory, method for method ------------------------------------------
    def add(
        self,
        content: str,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: list[str] | tuple[str, ...] | None = (),
        confidence: float = 1.0,
        valid_from: TimeInput | None = None,
        valid_until: TimeInput | None = None,
        metadata: dict[str, Any] | None = None,
        source_episode_id: str | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """``AgentMemory.add`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("add", locals())

    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        """``AgentMemory.get`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("get", locals())

    def list(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: list[str] | tuple[str, ...] | None = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        limit: int = 100,
        offset: int = 0,
        context: AgentContext | None = None,
    ) -> Memories:
        """``AgentMemory.list`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("list", locals())

    def count(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> int:
        """``AgentMemory.count`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("count", locals())

    def list_page(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        limit: int = 100,
        cursor: str | None = None,
        context: AgentContext | None = None,
    ) -> MemoryPage:
        """``AgentMemory.list_page`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("list_page", locals())

    def get_episode(self, episode_id: str, *, context: AgentContext | None = None) -> Episode:
        """``AgentMemory.get_episode`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("get_episode", locals())

    def search(
        self,
        query: str | None = None,
        *,
        limit: int = 10,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        status: str | None = None,
        namespace: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> Memories:
        """``AgentMemory.search`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("search", locals())

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
        """``AgentMemory.update`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("update", locals())

    def forget(
        self, memory_id: str, *, reason: str | None = None, context: AgentContext | None = None
    ) -> Memory:
        """``AgentMemory.forget`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("forget", locals())

    def timeline(
        self,
        entity: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        context: AgentContext | None = None,
    ) -> Memories:
        """``AgentMemory.timeline`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("timeline", locals())

    def current_facts(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        context: AgentContext | None = None,
    ) -> Memories:
        """``AgentMemory.current_facts`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("current_facts", locals())

    def recall(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> RecallResponse:
        """``AgentMemory.recall`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("recall", locals())

    def recall_as_pack(
        self,
        query: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        token_budget: int | None = None,
        context: AgentContext | None = None,
    ) -> ContextPack:
        """``AgentMemory.recall_as_pack`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("recall_as_pack", locals())

    def stats(self, *, context: AgentContext | None = None) -> Stats:
        """``AgentMemory.stats`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("stats", locals())

    def health(self) -> dict[str, Any]:
        """``AgentMemory.health`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("health", locals())

    def audit_log(
        self, *, limit: int = 100, after_seq: int = 0, context: AgentContext | None = None
    ) -> AuditEntries:
        """``AgentMemory.audit_log`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("audit_log", locals())

    # -- governance ---------------------------------------------------------------
    def set_quota(
        self,
        user: str | None = None,
        *,
        daily_writes: int | None,
        user_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """``AgentMemory.set_quota`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("set_quota", locals())

    def quota_status(
        self, user: str | None = None, *, context: AgentContext | None = None
    ) -> dict[str, Any]:
        """``AgentMemory.quota_status`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("quota_status", locals())

    def export_user(
        self,
        user: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """``AgentMemory.export_user`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("export_user", locals())

    def import_user(
        self, data: dict[str, Any], *, context: AgentContext | None = None
    ) -> dict[str, int]:
        """``AgentMemory.import_user`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("import_user", locals())

    def purge_user(
        self,
        user: str | None = None,
        reason: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> PurgeReport:
        """``AgentMemory.purge_user`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("purge_user", locals())

    def verify_audit_chain(
        self,
        user: str | None = None,
        *,
        anchor: tuple[int, str] | None = None,
        context: AgentContext | None = None,
    ) -> ChainReport:
        """``AgentMemory.verify_audit_chain`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("verify_audit_chain", locals())

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> AuditEntries:
        """``AgentMemory.deletion_audit_log`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("deletion_audit_log", locals())

    def apply_retention(
        self,
        policies: Any = None,
        *,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> RetentionReport:
        """``AgentMemory.apply_retention`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("apply_retention", locals())

    def compact(
        self,
        *,
        older_than: str | int | float,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """``AgentMemory.compact`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("compact", locals())

    def verify_memory(self, memory_id: str, *, context: AgentContext | None = None) -> bool:
        """``AgentMemory.verify_memory`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("verify_memory", locals())

    def verify_all(self, *, context: AgentContext | None = None) -> dict[str, Any]:
        """``AgentMemory.verify_all`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("verify_all", locals())

    # -- ingest -------------------------------------------------------------------
    def add_turns(
        self,
        turns: Sequence[Any],
        *,
        context: AgentContext | None = None,
    ) -> Memories:
        """``AgentMemory.add_turns`` over HTTP (turns as dicts or ``ConversationTurn``s): the
        server's typed error (``AccessDenied``, ``ValidationError``, ...) is raised here;
        ``StoreError`` when it cannot be reached."""
        return self._call("add_turns", locals())

    def ingest_round(
        self, turn: Turn | dict[str, Any], *, context: AgentContext | None = None
    ) -> IngestResult:
        """``AgentMemory.ingest_round`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("ingest_round", locals())

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        """``AgentMemory.consolidate`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("consolidate", locals())

    def reflect(
        self,
        user: str | None = None,
        *,
        min_episodes: int = 3,
        store: bool = True,
        context: AgentContext | None = None,
    ) -> Reflection:
        """``AgentMemory.reflect`` over HTTP: the server's typed error (``AccessDenied``,
        ``ValidationError``, ...) is raised here; ``StoreError`` when it cannot be reached."""
        return self._call("reflect", locals())
