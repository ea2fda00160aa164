"""Structured request logs: one JSON line per request, each with a request id.

Switchable (``attestor-arango api --log-format json``; text by default). The id
is the caller's ``X-Request-Id`` when it is a short token, otherwise a fresh one;
it is echoed in the response header and attached to every log record written
while the request runs (``request_id``), so a failure's traceback and its
access line share it.

The access line names the request's route template (``/v1/memories/{memory_id}``,
``unmatched`` for none) and method, never its path or query string: those hold what the
caller put in them, and a log line outlives any erasure of it (``purge_user``). Nor can a
line break sent in a path (``%0A``) end the line and forge the next one.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
import traceback
from contextvars import ContextVar
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attestor_arango.interfaces.api.errors import InternalError
from attestor_arango.interfaces.api.metrics import method_label, route_template

ACCESS_LOG = "attestor_arango.access"
REQUEST_ID = ContextVar("request_id", default="-")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_access = logging.getLogger(ACCESS_LOG)
_failures = logging.getLogger("attestor_arango.interfaces")


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on every record (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, logger, message, request id, extras."""

    FIELDS = ("method", "route", "status", "duration_ms")

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", REQUEST_ID.get()),
        }
        for name in self.FIELDS:
            if hasattr(record, name):
                out[name] = getattr(record, name)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"))


JsonFormatter.converter = time.gmtime


TRACE_LEVEL = 5  # uvicorn's TRACE


def log_failure(what: str, exc: BaseException, logger: logging.Logger = _failures) -> InternalError:
    """Logs an unexpected failure for an operator, with no word of the request in it.

    ``logger.exception`` wrote the traceback with every exception's message, and a message
    may quote what the request carried (an embedder that refused a memory's content, a
    query in a store error, a subject's words in a validation message): a log line
    outlives any erasure (``purge_user``). This writes ``what`` (the route or page), the
    error's class and the traceback's frames (files, lines, functions, the package's
    source lines), for the exception and every one it was raised from or while handling,
    each message withheld (only its length said). The request id is on the record.
    Returns the error the caller is answered with (which names nothing either)."""
    logger.error("%s failed: %s\n%s", what, _name(exc), withheld_traceback(exc))
    return InternalError("unexpected server error; the server log has the details")


def withheld_traceback(exc: BaseException) -> str:
    """``exc``'s traceback, its chain included, with each exception's message withheld."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = "".join(traceback.format_tb(current.__traceback__))
        try:
            size = len(str(current))
        except Exception:  # a __str__ that fails says nothing either
            size = -1
        parts.append(
            f"Traceback (most recent call last):\n{frames}{_name(current)}: "
            f"<message withheld, {size} characters>"
        )
        cause = current.__cause__
        current = (
            cause if cause is not None or current.__suppress_context__ else current.__context__
        )
    return "\n\nwhich was raised from, or while handling:\n\n".join(parts)


def _name(exc: BaseException) -> str:
    kind = type(exc)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def configure(fmt: str, level: str = "info") -> None:
    """Route this package's logs to stderr as JSON lines (``json``) or plain text."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    root = logging.getLogger("attestor_arango")
    root.handlers[:] = [handler]
    # "trace" is uvicorn's level below DEBUG, which Python's logging does not name
    root.setLevel(TRACE_LEVEL if level.lower() == "trace" else level.upper())
    root.propagate = False


class RequestLog:
    """Gives each request an id, echoes it, and writes one access record when it ends."""

    def __init__(self, app: ASGIApp, routes: list[Any]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        asked = ""
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                asked = value.decode("latin-1")
        request_id = asked if _SAFE_ID.match(asked) else secrets.token_hex(8)
        token = REQUEST_ID.set(request_id)
        # the route template and a known method, never the path or method sent: a path
        # holds what the caller put in it (a subject's name as a memory id, a row id the
        # erasure removed), and no purge reaches a log line. Matched before the app runs:
        # a mount's routing rewrites the scope's root path as it goes
        method, route = method_label(scope), route_template(self.routes, scope)
        status = 500
        start = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            _access.info(
                "%s %s %s",
                method,
                route,
                status,
                extra={
                    "method": method,
                    "route": route,
                    "status": status,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 3),
                },
            )
            REQUEST_ID.reset(token)
