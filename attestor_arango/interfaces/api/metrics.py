"""Prometheus metrics of the REST service (``/metrics``, via prometheus-client).

- ``attestor_http_requests_total{route,method,status}``: every request, by route
  template (``/v1/memories/{memory_id}``, never the id itself) and method (one of
  ``METHODS``, any other ``OTHER``: a client names the method, and the HTTP server takes
  any token, so a label of what was sent would grow a series per name sent): bounded labels;
- ``attestor_http_request_duration_seconds{route}``: latency of every request;
- ``attestor_recall_duration_seconds{op}``: latency of ``recall`` and ``recall_as_pack``;
- ``attestor_recall_lane_errors_total{lane}``: recalls that degraded because a lane
  failed (``RecallResponse.errors``, e.g. ``vector_error``);
- ``attestor_tenant_memories{tenant,status}``: store size, only for the tenant of
  the key that scrapes (a scrape without a key gets no tenant figure at all).

Each app has its own registry, so two apps in one process never mix their counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

RECALL_OPS = frozenset({"recall", "recall_as_pack"})
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER = "other"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Observer:
    """The app's metrics: fed by ``RequestMetrics`` and by the handlers' results."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "attestor_http_requests",
            "HTTP requests by route template, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "attestor_http_request_duration_seconds",
            "HTTP request latency by route template",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.recall = Histogram(
            "attestor_recall_duration_seconds",
            "Latency of recall calls (the memory call itself)",
            ["op"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.lane_errors = Counter(
            "attestor_recall_lane_errors",
            "Recalls that degraded because a retrieval lane failed",
            ["lane"],
            registry=self.registry,
        )

    def result(self, op: str, seconds: float, result: Any) -> None:
        """Called by the handler after a memory call returned."""
        if op in RECALL_OPS:
            self.recall.labels(op=op).observe(seconds)
            for lane in sorted(getattr(result, "errors", None) or {}):
                self.lane_errors.labels(lane=lane).inc()

    def exposition(self, tenant_stats: Any | None) -> bytes:
        """The text exposition, plus the caller's tenant size when it may see it."""
        body = generate_latest(self.registry)
        if tenant_stats is None:
            return body
        own = CollectorRegistry()
        gauge = Gauge(
            "attestor_tenant_memories",
            "Memories stored for the scraping key's tenant, by status",
            ["tenant", "status"],
            registry=own,
        )
        for status in ("active", "superseded", "archived"):
            gauge.labels(tenant=tenant_stats.tenant, status=status).set(
                getattr(tenant_stats, status)
            )
        return body + generate_latest(own)


def route_template(routes: list[BaseRoute], scope: Scope) -> str:
    """The path template a request matches (bounded label values), or 'unmatched'.

    Never the path itself: a path holds whatever the caller put in it (a subject's name
    as a memory id). A mounted app's routes are followed (``/ui/memory/{memory_id}``); a
    mount without routes of its own (static files) is its prefix and ``/{path}``."""
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.NONE:
            continue
        template = str(getattr(route, "path", "unmatched"))
        inner = getattr(route, "routes", None)
        if isinstance(route, Mount):
            rest = route_template(inner, {**scope, **child}) if inner else "/{path}"
            return template + rest if rest != "unmatched" else f"{template}/unmatched"
        return template or "/"
    return "unmatched"


def method_label(scope: Scope) -> str:
    """The request's method as a label or log field: one of ``METHODS``, else ``OTHER`` (a
    client may send any token as the method, a word of a subject's too)."""
    method = str(scope["method"])
    return method if method in METHODS else OTHER


class RequestMetrics:
    """Counts and times every HTTP request by route template and status."""

    def __init__(self, app: ASGIApp, observer: Observer, routes: list[BaseRoute]) -> None:
        self.app = app
        self.observer = observer
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = route_template(self.routes, scope)
        status = 500
        start = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.observer.duration.labels(route=route).observe(time.perf_counter() - start)
            method = method_label(scope)
            self.observer.requests.labels(route=route, method=method, status=str(status)).inc()


def metrics_endpoint(
    observer: Observer,
    memory: AgentMemory,
    caller: Callable[[Request], tuple[Any, AgentContext]],
) -> Callable[[Request], Any]:
    """``GET /metrics``: service metrics for anyone who reaches it; the tenant's store
    size only when the request carries a key (then for that key's tenant alone)."""
    import anyio

    async def metrics(request: Request) -> Response:
        stats = None
        try:
            _, ctx = caller(request)
        except AttestorError:
            ctx = None
        if ctx is not None:
            try:
                stats = await anyio.to_thread.run_sync(lambda: memory.stats(context=ctx))
            except AttestorError:
                stats = None  # a role without read access sees no tenant figures
        return Response(observer.exposition(stats), media_type=CONTENT_TYPE_LATEST)

    return metrics
