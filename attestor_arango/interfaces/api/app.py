"""The Starlette application: one route per row of ``spec.ROUTES``, nothing else.

Each request: authenticate the key, build the caller's AgentContext (narrowed
by headers, never widened), validate the arguments against AgentMemory's own
signature, call the method in a worker thread under a timeout, and return its
result as JSON. Every failure is a JSON body ``{code, message, details}`` with
the error class's HTTP status. The handlers hold no memory logic.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as StarletteRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attestor_arango.cancel import CallFlag, cancellable, check_cancelled
from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError, ValidationError
from attestor_arango.interfaces.api import codec, spec
from attestor_arango.interfaces.api.auth import ANY, ApiKey, KeyRing, authorize
from attestor_arango.interfaces.api.docs import docs_routes
from attestor_arango.interfaces.api.errors import (
    InternalError,
    MethodNotAllowed,
    PayloadTooLarge,
    RequestTimeout,
    RouteNotFound,
    UnsupportedMediaType,
)
from attestor_arango.interfaces.api.fairness import TenantSlots
from attestor_arango.interfaces.api.logs import RequestLog, log_failure
from attestor_arango.interfaces.api.loopback import JSON_MEDIA, LoopbackOnly, media_type
from attestor_arango.interfaces.api.metrics import Observer, RequestMetrics, metrics_endpoint
from attestor_arango.interfaces.api.openapi import build_openapi
from attestor_arango.interfaces.ui import mount_ui
from attestor_arango.jsontext import load_json

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

log = logging.getLogger("attestor_arango.interfaces.api")


@dataclass(frozen=True)
class ApiSettings:
    """Limits of the service (all bounded so one caller cannot starve the rest)."""

    max_body_bytes: int = 1_048_576
    request_timeout_s: float = 30.0
    # after the timeout, how long a call is waited for to stop at its cancel flag (a write
    # rolls back within one write's time) so the answer says whether anything was stored
    cancel_grace_s: float = 5.0
    workers: int = 8  # concurrent AgentMemory calls
    # of which one tenant's at most (None: half, at least one): the rest stay free for the
    # other tenants however many slow calls one sends (fairness.py)
    tenant_workers: int | None = None

    def __post_init__(self) -> None:
        """Raises ``ValidationError`` for a tenant share of no worker."""
        if self.tenant_workers is not None and self.tenant_workers < 1:
            raise ValidationError("tenant_workers must be at least 1 (or None: half the workers)")

    def per_tenant(self) -> int:
        """How many of the workers one tenant's calls may hold at once."""
        if self.tenant_workers is not None:
            return self.tenant_workers
        return max(1, self.workers // 2)


async def _run(
    op: str,
    call: Callable[[], Any],
    settings: ApiSettings,
    limiter: anyio.CapacityLimiter,
    slot: contextlib.AbstractAsyncContextManager[None],
) -> Any:
    """``call()`` in a worker thread under the request timeout; what it returns or raises.

    The call first takes ``slot`` (one of its tenant's, ``fairness.py``), then a worker of
    ``limiter``; the time it waits for either counts towards the timeout.

    On the timeout the call's cancel flag is raised (``cancel.py``): a call that has
    not reached a commit rolls back at its next one instead of committing unseen, and it
    is waited for ``cancel_grace_s`` more, so the answer says what happened: its result if
    it finished after all, ``CallCancelled`` (504, nothing stored) if it stopped. A call
    already committing when the timeout fires refuses the flag (it cannot be "nothing
    stored" any more) and is waited for the same grace: its own answer, not a cancellation.
    Only a call still running after the grace (a long read, a commit still under way) is
    abandoned with ``RequestTimeout`` (504, "a write may still complete").
    """
    flag = CallFlag()
    outcome: list[tuple[bool, Any]] = []
    done = anyio.Event()

    def run() -> Any:
        with cancellable(flag):
            check_cancelled(op)  # waited for a worker past the timeout: never start
            return call()

    async def worker() -> None:
        try:
            async with slot:
                outcome.append(
                    (
                        True,
                        await anyio.to_thread.run_sync(
                            run, abandon_on_cancel=True, limiter=limiter
                        ),
                    )
                )
        except Exception as exc:
            outcome.append((False, exc))
        done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(worker)
        with anyio.move_on_after(settings.request_timeout_s):
            await done.wait()
        if not done.is_set():
            flag.cancel()
            with anyio.move_on_after(settings.cancel_grace_s):
                await done.wait()
        if not done.is_set():
            group.cancel_scope.cancel()
    if not outcome:
        raise RequestTimeout(
            f"{op} did not finish in {settings.request_timeout_s}s; "
            "a write may still complete, so read before retrying",
        )
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def error_response(err: AttestorError) -> JSONResponse:
    return JSONResponse(err.to_dict(), status_code=err.http_status)


class BodyLimit:
    """Refuses bodies over the limit with 413, by Content-Length and while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = PayloadTooLarge(
            f"request body over {self.max_bytes} bytes; send less per request",
            limit=self.max_bytes,
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await error_response(too_big)(scope, receive, send)
                    return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise too_big
            return message

        await self.app(scope, limited, send)


def _no_auth_ring(ctx: AgentContext) -> tuple[KeyRing, ApiKey]:
    """Without keys the service acts as the configured default identity only."""
    key = ApiKey(
        id="no-auth",
        sha256="0" * 64,
        tenant=ctx.tenant,
        roles=(ctx.role,),
        agent_ids=(ctx.agent_id, ANY),
        namespaces=None,
        read_only=ctx.read_only,
        token_budget=ctx.token_budget,
    )
    return KeyRing([key]), key


def create_app(
    memory: AgentMemory,
    keys: KeyRing | None,
    settings: ApiSettings | None = None,
    *,
    close_on_shutdown: bool = False,
) -> Starlette:
    """The ASGI app over one AgentMemory.

    ``keys=None`` serves without authentication as ``memory.default_context``
    (for a single local user on loopback); otherwise every /v1 request needs a key.
    """
    settings = settings or ApiSettings()
    cls = type(memory)
    limiter = anyio.CapacityLimiter(settings.workers)
    slots = TenantSlots(settings.per_tenant())
    default_ctx = memory.default_context
    if keys is None:
        ring, fixed_key = _no_auth_ring(default_ctx)
    else:
        ring, fixed_key = keys, None
    mounted = [route for route in spec.ROUTES if callable(getattr(cls, route.op, None))]

    def caller(request: Request) -> tuple[ApiKey, AgentContext]:
        headers = request.headers
        if fixed_key is not None:
            return fixed_key, ring.context(fixed_key, headers)
        presented = headers.get(spec.H_API_KEY)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            presented = auth[7:].strip()
        key = ring.authenticate(presented)
        return key, ring.context(key, headers)

    observer = Observer()  # /metrics (interfaces/api/metrics.py)

    def endpoint(route: spec.Route) -> Callable[[Request], Any]:
        fn = getattr(cls, route.op)
        title = "".join(part.title() for part in route.op.split("_")) + "Params"

        async def handle(request: Request) -> Response:
            try:
                key, ctx = caller(request)
                raw = await _arguments(request, route, fn)
                kwargs = codec.call_kwargs(fn, title, raw, strict=not route.query)
                authorize(route, key, ctx, kwargs)
                if "context" in codec.inspect.signature(fn).parameters:
                    kwargs["context"] = ctx
                method = getattr(memory, route.op)
                started = time.perf_counter()
                result = await _run(
                    route.op, lambda: method(**kwargs), settings, limiter, slots.hold(ctx.tenant)
                )
                observer.result(route.op, time.perf_counter() - started, result)
                return JSONResponse(codec.dump_result(fn, result))
            except AttestorError as err:
                return error_response(err)
            except (ValueError, OverflowError, RecursionError, UnicodeError) as exc:
                # raised by what the request carried (a number or string no store can hold):
                # the caller's to fix, and nothing was changed (the write rolled back)
                log.info("refused %s: %s", route.op, type(exc).__name__)
                return error_response(
                    ValidationError(
                        f"{route.op}: an argument is out of range or not representable "
                        f"({type(exc).__name__}); send smaller numbers and valid text"
                    )
                )
            except Exception as exc:  # logged with no word of the request (log_failure)
                return error_response(log_failure(route.op, exc, log))

        return handle

    document = build_openapi(memory, mounted)

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    routes = [
        StarletteRoute(r.full_path, endpoint(r), methods=[r.method], name=r.op) for r in mounted
    ]
    routes.append(StarletteRoute("/openapi.json", openapi, methods=["GET"]))
    routes.append(StarletteRoute("/healthz", healthz, methods=["GET"]))
    # operator surface: /docs (packaged Swagger UI), /metrics (Prometheus)
    routes += docs_routes()
    routes.append(
        StarletteRoute("/metrics", metrics_endpoint(observer, memory, caller), methods=["GET"])
    )

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        if status == 404:
            return error_response(RouteNotFound(f"no route {request.url.path}; see /openapi.json"))
        if status == 405:
            return error_response(
                MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}")
            )
        if status == 413:
            return error_response(PayloadTooLarge("request body too large"))
        return error_response(InternalError(f"HTTP {status}"))

    async def payload_error(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, AttestorError):  # Starlette hands over what was registered
            return error_response(InternalError(f"{type(exc).__name__}"))
        return error_response(exc)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if close_on_shutdown:
            await anyio.to_thread.run_sync(memory.close)

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, PayloadTooLarge: payload_error},
        lifespan=lifespan,
    )
    app.router.routes.append(mount_ui(memory, ring, fixed_key))  # read-only Evidence Board
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if keys is None:  # no keys: only this machine's own clients, never a web page (loopback.py)
        app.add_middleware(LoopbackOnly)
    app.add_middleware(RequestMetrics, observer=observer, routes=app.router.routes)
    app.add_middleware(RequestLog, routes=app.router.routes)  # outermost: ids every request
    app.state.memory = memory
    app.state.settings = settings
    return app


MAX_DEPTH = 32  # nesting of a request body; no argument needs more


def check_json_value(value: Any, depth: int = 0) -> None:
    """Refuses nesting past ``MAX_DEPTH`` and strings no UTF-8 store can hold (lone
    surrogates such as ``"\\ud800"``); raises ``ValidationError``."""
    if depth > MAX_DEPTH:
        raise ValidationError(f"request body nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                "request body holds a lone UTF-16 surrogate (e.g. \\ud800); send valid text"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_json_value(key, depth + 1)
            check_json_value(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_json_value(item, depth + 1)


async def _arguments(request: Request, route: spec.Route, fn: Callable[..., Any]) -> dict[str, Any]:
    """Path parameters plus the query string (GET) or the JSON object body."""
    raw: dict[str, Any] = {}
    if route.query:
        for name in request.query_params:
            values = request.query_params.getlist(name)
            raw[name] = values if len(values) > 1 or name.endswith("[]") else values[0]
        raw = codec.query_arguments(fn, {k.removesuffix("[]"): v for k, v in raw.items()})
    else:
        body = await request.body()
        if body.strip():
            kind = media_type(request.headers.get("content-type", ""))
            if kind not in JSON_MEDIA:
                raise UnsupportedMediaType(
                    f"request body declared as {kind[:60]!r}; send JSON as application/json"
                )
            parsed = load_json(body, "request body")
            check_json_value(parsed)
            if not isinstance(parsed, dict):
                raise ValidationError("request body must be a JSON object of named arguments")
            raw.update(parsed)
    for name in route.path_params:
        if name in raw:
            raise ValidationError(f"{name} is given by the path; do not repeat it in the body")
        raw[name] = request.path_params[name]
    return raw
