"""MCP over streamable HTTP: the stdio server's tools behind the REST service's API keys.

Several remote agents share one memory through one endpoint (``/mcp``). Each HTTP
request must carry a key (``Authorization: Bearer <key>`` or ``X-API-Key``); a
request without a valid one is answered 401 before the MCP layer sees it, and one
whose narrowing headers ask for more than the key grants gets 403. Inside, every
tool call acts as the context its own request's key grants (``mcp.Caller``), so
two keys of two tenants on one server never see each other's memories.

Sessions are stateless: each POST stands alone, so nothing a caller holds (a
session id) can carry another caller's identity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.app import ApiSettings, BodyLimit
from attestor_arango.interfaces.api.auth import KeyRing
from attestor_arango.interfaces.api.errors import PayloadTooLarge
from attestor_arango.interfaces.api.logs import RequestLog
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.interfaces.mcp_stdio import screen

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

MCP_PATH = "/mcp"


class KeyGate:
    """Refuses an HTTP request to the MCP endpoint unless its key and headers are valid."""

    def __init__(self, app: ASGIApp, keys: KeyRing | None) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.keys is None or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        headers = request.headers
        presented = headers.get(spec.H_API_KEY)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            presented = auth[7:].strip()
        try:
            key = self.keys.authenticate(presented)
            self.keys.context(key, headers)
        except AttestorError as err:
            response = JSONResponse(err.to_dict(), status_code=err.http_status)
            if err.http_status == 401:
                response.headers["WWW-Authenticate"] = 'Bearer realm="attestor-arango"'
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class Screen:
    """Answers a POST body the stdio transport would refuse with the same JSON-RPC error (400).

    ``mcp_stdio.screen`` judges a message before the SDK reads it: an object that gives a
    key twice (the SDK keeps the last, so which value a call means would be the parser's
    choice), nesting past its limit, a lone surrogate, text that is no JSON-RPC message.
    A body it passes reaches the SDK unchanged.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and _is_endpoint(scope):
            await _no_stream(scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        first: Message = {"type": "http.request", "body": b"", "more_body": False}
        while True:
            try:
                message = await receive()
            except PayloadTooLarge as err:  # BodyLimit, outside, counts what streams in
                await JSONResponse(err.to_dict(), status_code=err.http_status)(scope, receive, send)
                return
            if message["type"] != "http.request":
                first = message  # a disconnect: the app sees it as it would have
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                first = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
                break
        body = first.get("body", b"")
        error = screen(body.decode("utf-8", errors="replace")) if body else None
        if error is not None:
            answer = error.model_dump(mode="json", by_alias=True, exclude_none=True)
            await JSONResponse(answer, status_code=400)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return first

        await self.app(scope, replay, send)


def _is_endpoint(scope: Scope) -> bool:
    return str(scope["path"]).rstrip("/") == MCP_PATH


async def _no_stream(scope: Scope, receive: Receive, send: Send) -> None:
    """405 to a GET of the endpoint: stateless, the server never sends on a standalone
    stream (a client opens one only with a session id, never issued here), and the SDK
    held one open, with its own session task, for as long as the caller stayed."""
    error = {"code": -32600, "message": "Method Not Allowed: this server offers no stream; "
             "POST each JSON-RPC message to /mcp"}  # fmt: skip
    answer = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=405)
    answer.headers["Allow"] = "POST"
    await answer(scope, receive, send)


def create_mcp_app(
    memory: AgentMemory,
    keys: KeyRing | None,
    *,
    host: str = "127.0.0.1",
    max_body_bytes: int = ApiSettings.max_body_bytes,
) -> ASGIApp:
    """The ASGI app serving MCP at ``/mcp`` and a liveness probe at ``/healthz``.

    ``keys=None`` serves as ``memory.default_context`` without authentication (the
    CLI allows that on loopback only). ``host`` is the bind address: on loopback the
    SDK's DNS-rebinding protection admits only loopback Host/Origin headers. A body over
    ``max_body_bytes`` (REST's limit by default) is answered 413 before it is read whole.
    Each request gets an ``X-Request-Id`` and one access record (``api.logs.RequestLog``).
    """
    server = build_server(memory, keys=keys)

    @server.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True, host=host
    )
    # the package's access line (route template, method, status; api/logs.py), outermost
    # as in the REST app: uvicorn's own prints the path and query string as sent
    return RequestLog(KeyGate(BodyLimit(Screen(app), max_body_bytes), keys), routes=app.routes)
