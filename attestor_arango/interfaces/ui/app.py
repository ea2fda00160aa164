"""The Evidence Board's routes: GET pages under ``/ui``, rendered on the server.

``mount_ui`` returns one Starlette ``Mount`` that the REST app adds to its routes, so
the board shares the service's keys, contexts and process. Every route answers GET
(and HEAD) only; a write method gets 405. Templates autoescape everything (memory
content is untrusted text written by agents) and every page is sent with a strict
Content-Security-Policy: scripts and styles come only from ``/ui/static``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from attestor_arango.clock import iso, to_us
from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing
from attestor_arango.interfaces.api.errors import AuthenticationError
from attestor_arango.interfaces.api.logs import log_failure
from attestor_arango.interfaces.ui import explain as X
from attestor_arango.interfaces.ui import params as P
from attestor_arango.interfaces.ui import views
from attestor_arango.interfaces.ui.access import REALM, Gate, Reader
from attestor_arango.interfaces.ui.verify import Verifications

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

log = logging.getLogger("attestor_arango.interfaces.ui")
HERE = Path(__file__).resolve().parent
PREFIX = "/ui"

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}

PAGES = (
    ("memories", "Memories"),
    ("timeline", "Entity timeline"),
    ("recall", "Recall explainer"),
    ("audit", "Audit"),
)


def _time(value: Any) -> str:
    """A datetime as ISO-8601 UTC to the second (the full value goes in a title)."""
    if value is None:
        return "open"
    text = iso(to_us(value)) or "open"
    return text[:19] + "Z" if len(text) > 20 else text


def _full_time(value: Any) -> str:
    return "open" if value is None else (iso(to_us(value)) or "open")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,  # every template, whatever its name: content is untrusted
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["t"] = _time
    env.filters["tfull"] = _full_time
    env.globals["fields"] = X.FIELDS
    env.globals["bd"] = X.value
    return env


class Board:
    """The pages over one AgentMemory, behind one ``Gate``."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.env = _environment()

    # rendering ---------------------------------------------------------------------------
    def render(self, request: Request, name: str, status: int = 200, **data: Any) -> Response:
        base = request.scope.get("root_path", "").rstrip("/")
        if not base.endswith(PREFIX):
            base += PREFIX
        query = dict(request.query_params)

        def link(page: str, **changes: Any) -> str:
            """A board URL; ``keep=True`` carries this page's ns and as_of along."""
            keep = changes.pop("keep", True)
            merged = {k: v for k, v in query.items() if k in ("ns", "as_of")} if keep else {}
            merged.update({k: str(v) for k, v in changes.items() if v is not None})
            return f"{base}/{page}" + (f"?{urlencode(merged)}" if merged else "")

        def here(**changes: Any) -> str:
            merged = dict(query)
            for k, v in changes.items():
                if v is None:
                    merged.pop(k, None)
                else:
                    merged[k] = str(v)
            return request.url.path + (f"?{urlencode(merged)}" if merged else "")

        html = self.env.get_template(name).render(
            base=base,
            pages=PAGES,
            query=query,
            link=link,
            here=here,
            path=request.url.path,
            **data,
        )
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def error(self, request: Request, err: AttestorError) -> Response:
        response = self.render(
            request,
            "error.html",
            status=err.http_status,
            page="error",
            err=err,
            reader=None,
            slider=None,
        )
        if isinstance(err, AuthenticationError):
            response.headers["www-authenticate"] = REALM
        return response

    # pages -------------------------------------------------------------------------------
    def page(
        self,
        name: str,
        build: Callable[[Reader, Request], dict[str, Any]],
        nav: str | None = None,
    ) -> Callable[[Request], Response]:
        """``name``.html filled by ``build``; ``nav`` is the menu entry it belongs to."""
        template = f"{name}.html"
        current = nav or name

        def endpoint(request: Request) -> Response:
            try:
                reader = self.gate.reader(request.headers, P.text(request.query_params, "ns"))
                data = build(reader, request)
                slider = _slider(reader, request)
                return self.render(
                    request, template, page=current, reader=reader, slider=slider, **data
                )
            except AttestorError as err:
                return self.error(request, err)
            except Exception as exc:  # logged with no word of the request (log_failure)
                return self.error(request, log_failure(f"Evidence Board page {name}", exc, log))

        return endpoint


def _slider(reader: Reader, request: Request) -> dict[str, Any] | None:
    """The as-of control's range: the namespace's first belief up to now."""
    try:
        first = views.earliest_us(reader)
    except AttestorError:
        return None
    return {"min_us": first, "value": P.as_of(request.query_params)}


def mount_ui(memory: AgentMemory, ring: KeyRing, fixed_key: ApiKey | None) -> Mount:
    """The board as one Mount at ``/ui`` (the REST app adds it to its routes)."""
    board = Board(Gate(memory, ring, fixed_key))
    runs = Verifications()

    def memories(r: Reader, req: Request) -> dict[str, Any]:
        return views.memories(r, req.query_params)

    def timeline(r: Reader, req: Request) -> dict[str, Any]:
        return views.timeline(r, req.query_params)

    def recall(r: Reader, req: Request) -> dict[str, Any]:
        return X.explain(r, req.query_params)

    def provenance(r: Reader, req: Request) -> dict[str, Any]:
        return views.provenance(r, req.path_params["memory_id"], req.query_params)

    def audit(r: Reader, req: Request) -> dict[str, Any]:
        return views.audit(r, req.query_params, runs)

    def verify(r: Reader, req: Request) -> dict[str, Any]:
        return views.verify(r, req.query_params, runs)

    def home(request: Request) -> Response:
        suffix = f"?{request.url.query}" if request.url.query else ""
        target = request.scope.get("root_path", "").rstrip("/") + "/memories" + suffix
        return RedirectResponse(target, status_code=307, headers=SECURITY_HEADERS)

    get = ["GET"]
    return Mount(
        PREFIX,
        routes=[
            Route("/", home, methods=get),
            Route("/memories", board.page("memories", memories), methods=get),
            Route("/timeline", board.page("timeline", timeline), methods=get),
            Route("/recall", board.page("recall", recall), methods=get),
            Route("/memory/{memory_id}", board.page("memory", provenance), methods=get),
            Route("/audit", board.page("audit", audit), methods=get),
            Route("/audit/verify", board.page("verify", verify, nav="audit"), methods=get),
            Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
    )
