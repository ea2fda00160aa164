"""What a server without authentication accepts: requests of this machine's own clients.

``serve --no-auth`` acts as the default identity for whoever connects, so a web page
in the user's browser must not be able to drive it: a request whose ``Host`` is not a
loopback name (DNS rebinding), whose ``Origin`` is another site, that a browser marks
``Sec-Fetch-Site: cross-site``, or a body POST that is not ``application/json`` (the
"simple" requests a page may send without a CORS preflight) is refused with 403.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from attestor_arango.errors import AccessDenied

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def host_name(value: str) -> str:
    """The host of a ``Host`` header or an origin's authority, without the port."""
    text = value.strip().lower()
    if text.startswith("["):  # [::1]:8080
        return text[: text.find("]") + 1] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def refusal(headers: dict[str, str], method: str) -> str | None:
    """Why a request may not reach a no-auth server, or None when it may."""
    host = headers.get("host", "")
    if host_name(host) not in LOOPBACK_HOSTS:
        return f"Host {host[:100]!r} is not a loopback name (this server runs without keys)"
    origin = headers.get("origin")
    if origin is not None and origin != "null":
        authority = origin.split("://", 1)[-1].split("/", 1)[0]
        if host_name(authority) not in LOOPBACK_HOSTS:
            return f"cross-origin request from {origin[:100]!r} to a server without keys"
    elif origin == "null":
        return "a request from an opaque origin to a server without keys"
    if headers.get("sec-fetch-site") == "cross-site":
        return "a cross-site browser request to a server without keys"
    if method in {"POST", "PUT", "PATCH", "DELETE"}:
        kind = media_type(headers.get("content-type", ""))
        if kind not in JSON_MEDIA:
            return f"a {method} with Content-Type {kind[:60]!r}; send application/json"
    return None


JSON_MEDIA = ("", "application/json")  # what a request body may be declared as (none: JSON)


def media_type(content_type: str) -> str:
    """The media type of a Content-Type header, without parameters, in lower case."""
    return content_type.split(";", 1)[0].strip().lower()


class LoopbackOnly:
    """ASGI middleware applying ``refusal`` to every HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            why = refusal(headers, scope.get("method", "GET"))
            if why is not None:
                err = AccessDenied(why + "; use a key (serve without --no-auth) for other clients")
                await JSONResponse(err.to_dict(), status_code=err.http_status)(scope, receive, send)
                return
        await self.app(scope, receive, send)
