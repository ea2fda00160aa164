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
import inspect
from typing import Any
from urllib.parse import quote

import httpx

from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError, StoreError, ValidationError
from attestor_arango.governance.audit_chain import ChainReport
from attestor_arango.governance.purge import PurgeReport
from attestor_arango.governance.retention import RetentionReport
from attestor_arango.ingest import IngestResult, Turn
from attestor_arango.ingest.consolidation import ConsolidationReport
from attestor_arango.ingest.reflection import Reflection
from attestor_arango.interfaces.api import codec, spec
from attestor_arango.interfaces.api.errors import error_from_payload
from attestor_arango.models import AuditEntry, Episode, Memory, MemoryPage, RecallResponse, Stats
from attestor_arango.retrieval.pack import ContextPack
from attestor_arango.validation import TimeInput

_UNSET: Any = object()  # "leave unchanged", as in AgentMemory.update
# aliases: inside the class body `list` names the method, not the builtin
Memories = list[Memory]
AuditEntries = list[AuditEntry]


def context_headers(ctx: AgentContext | None) -> dict[str, str]:
    """The headers that ask the server to act as ``ctx`` (it checks them against the key)."""
    if ctx is None:
        return {}
    headers = {
        spec.H_AGENT: ctx.agent_id,
        spec.H_ROLE: ctx.role.value,
        spec.H_TENANT: ctx.tenant,
        spec.H_NAMESPACE: ctx.namespace,
        spec.H_BUDGET: str(ctx.token_budget),
    }
    if ctx.session_id:
        headers[spec.H_SESSION] = ctx.session_id
    if ctx.read_only:
        headers[spec.H_READ_ONLY] = "true"
    trail = [a for a in ctx.agent_trail if a != ctx.agent_id]
    if trail:
        headers[spec.H_TRAIL] = ",".join(trail)
    return headers


def _query_value(value: Any) -> Any:
    data = codec.jsonable(value)
    if isinstance(data, list):
        return [str(v) for v in data]
    if isinstance(data, bool):
        return "true" if data else "false"
    return str(data)


def build_request(
    op: str, given: dict[str, Any], default: AgentContext | None
) -> tuple[Any, str, str, dict[str, Any]]:
    """The route, path and httpx arguments for one call (only non-default arguments travel)."""
    route = spec.ROUTES_BY_OP[op]
    method = getattr(MemoryClient, op)
    sent: dict[str, Any] = {}
    for param in codec.arguments(method):
        value = given[param.name]
        if value is not param.default:
            sent[param.name] = value
    path = route.full_path
    for name in route.path_params:
        path = path.replace("{" + name + "}", quote(str(sent.pop(name)), safe=""))
    request: dict[str, Any] = {"headers": context_headers(given.get("context") or default)}
    if route.query:
        request["params"] = {k: _query_value(v) for k, v in sent.items()}
    else:
        request["json"] = codec.jsonable(sent)
    return method, route.method, path, request


def transport_error(base_url: str, exc: httpx.HTTPError) -> StoreError:
    if isinstance(exc, httpx.TimeoutException):
        return StoreError(
            f"no answer from {base_url} in time ({exc}); a write may still complete, "
            "so read before retrying",
        )
    return StoreError(
        f"cannot reach the attestor service at {base_url}: {exc}; "
        "check that `attestor-arango api` runs and the URL is right",
    )


def read_response(op: str, method: Any, response: httpx.Response) -> Any:
    """The typed result, or the typed error the server reported."""
    try:
        payload = response.json()
    except ValueError:
        payload = response.text
    if response.status_code >= 400:
        raise error_from_payload(response.status_code, payload)
    try:
        return codec.load_result(method, payload)
    except Exception as exc:
        raise AttestorError(
            f"{op}: the server's answer does not match this client's model ({exc}); "
            "client and server versions probably differ",
        ) from exc


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


class MemoryClient:
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
        headers = _headers(api_key)
        self.base_url = base_url.rstrip("/")
        self.default_context = context
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
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
        method, verb, path, request = build_request(op, given, self.default_context)
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
        return self._call("add", locals())

    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
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
        return self._call("list_page", locals())

    def get_episode(self, episode_id: str, *, context: AgentContext | None = None) -> Episode:
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
        return self._call("update", locals())

    def forget(
        self, memory_id: str, *, reason: str | None = None, context: AgentContext | None = None
    ) -> Memory:
        return self._call("forget", locals())

    def timeline(
        self,
        entity: str,
        *,
        as_of: TimeInput | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        context: AgentContext | None = None,
    ) -> Memories:
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
        return self._call("recall_as_pack", locals())

    def stats(self, *, context: AgentContext | None = None) -> Stats:
        return self._call("stats", locals())

    def health(self) -> dict[str, Any]:
        return self._call("health", locals())

    def audit_log(
        self, *, limit: int = 100, after_seq: int = 0, context: AgentContext | None = None
    ) -> AuditEntries:
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
        return self._call("set_quota", locals())

    def quota_status(
        self, user: str | None = None, *, context: AgentContext | None = None
    ) -> dict[str, Any]:
        return self._call("quota_status", locals())

    def export_user(
        self,
        user: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        return self._call("export_user", locals())

    def import_user(
        self, data: dict[str, Any], *, context: AgentContext | None = None
    ) -> dict[str, int]:
        return self._call("import_user", locals())

    def purge_user(
        self,
        user: str | None = None,
        reason: str | None = None,
        *,
        external_id: str | None = None,
        context: AgentContext | None = None,
    ) -> PurgeReport:
        return self._call("purge_user", locals())

    def verify_audit_chain(
        self,
        user: str | None = None,
        *,
        anchor: tuple[int, str] | None = None,
        context: AgentContext | None = None,
    ) -> ChainReport:
        return self._call("verify_audit_chain", locals())

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> AuditEntries:
        return self._call("deletion_audit_log", locals())

    def apply_retention(
        self,
        policies: Any = None,
        *,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> RetentionReport:
        return self._call("apply_retention", locals())

    def compact(
        self,
        *,
        older_than: str | int | float,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        return self._call("compact", locals())

    def verify_memory(self, memory_id: str, *, context: AgentContext | None = None) -> bool:
        return self._call("verify_memory", locals())

    def verify_all(self, *, context: AgentContext | None = None) -> dict[str, Any]:
        return self._call("verify_all", locals())

    # -- ingest -------------------------------------------------------------------
    def ingest_round(
        self, turn: Turn | dict[str, Any], *, context: AgentContext | None = None
    ) -> IngestResult:
        return self._call("ingest_round", locals())

    def consolidate(
        self, *, limit: int = 50, context: AgentContext | None = None
    ) -> ConsolidationReport:
        return self._call("consolidate", locals())

    def reflect(
        self,
        user: str | None = None,
        *,
        min_episodes: int = 3,
        store: bool = True,
        context: AgentContext | None = None,
    ) -> Reflection:
        return self._call("reflect", locals())


class AsyncMemoryClient:
    """MemoryClient for asyncio: every method is a coroutine with the same signature."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        context: AgentContext | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = _headers(api_key)
        self.base_url = base_url.rstrip("/")
        self.default_context = context
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, op: str, given: dict[str, Any]) -> Any:
        method, verb, path, request = build_request(op, given, self.default_context)
        try:
            response = await self._http.request(verb, path, **request)
        except httpx.HTTPError as exc:
            raise transport_error(self.base_url, exc) from exc
        return read_response(op, method, response)

    def __getattr__(self, name: str) -> Any:
        """``await client.add(...)`` etc.: the sync client's signature, awaited."""
        if name.startswith("_") or name not in spec.ROUTES_BY_OP:
            raise AttributeError(name)
        signature = inspect.signature(getattr(MemoryClient, name))

        async def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(None, *args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
            given.pop("self")
            return await self._call(name, given)

        call.__name__ = name
        call.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=list(signature.parameters.values())[1:]
        )
        return call
