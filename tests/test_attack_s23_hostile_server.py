"""Attack battery: ``MemoryClient`` and ``AsyncMemoryClient`` against a hostile or broken
server.

A body of JSON nested 100,000 deep (an answer, an error's message or its details) raised
the JSON reader's bare ``RecursionError`` out of every client method: a caller catching
``AttestorError`` (as the clients document) was not protected. It is now read as an
answer that is not this client's JSON: ``AttestorError`` for a 2xx, the status's typed
error for a 4xx/5xx. A redirect (to another host, with the API key) is not followed: one
request, to the server named, and a typed error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from attestor_arango import AgentContext
from attestor_arango.errors import AttestorError, StoreError
from attestor_arango.interfaces.async_client import AsyncMemoryClient
from attestor_arango.interfaces.client import MemoryClient

CTX = AgentContext(agent_id="o", role="orchestrator", tenant="t", namespace="n")
DEPTH = 100_000
CALLS: list[tuple[str, tuple[Any, ...]]] = [
    ("recall", ("where is Ann",)),
    ("add", ("Ann likes tea",)),
    ("list", ()),
    ("stats", ()),
    ("export_user", ("t",)),
    ("health", ()),
]


def _nested(prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    return prefix + b"[" * DEPTH + b"]" * DEPTH + suffix


BODIES = {
    "answer": (200, _nested()),
    "error-message": (400, _nested(b'{"code": "validation_error", "message": ', b"}")),
    "error-details": (
        422,
        _nested(b'{"code": "validation_error", "message": "m", "details": {"a": ', b"}}"),
    ),
    "server-error": (500, _nested()),
}


def _transport(status: int, body: bytes, seen: list[httpx.Request]) -> Callable[..., Any]:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=body, headers={"content-type": "application/json"})

    return handle


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("op,args", CALLS, ids=[c[0] for c in CALLS])
def test_a_deeply_nested_answer_is_a_typed_error_of_the_sync_client(
    body: str, op: str, args: tuple[Any, ...]
) -> None:
    status, content = BODIES[body]
    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(_transport(status, content, seen))
    client = MemoryClient("http://srv", "key", context=CTX, transport=transport)
    with client, pytest.raises(AttestorError) as caught:
        getattr(client, op)(*args)
    assert len(seen) == 1
    if status >= 500:
        assert isinstance(caught.value, StoreError)


@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_deeply_nested_answer_is_a_typed_error_of_the_async_client(body: str) -> None:
    status, content = BODIES[body]
    seen: list[httpx.Request] = []
    handle = _transport(status, content, seen)

    async def run() -> None:
        transport = httpx.MockTransport(handle)
        async with AsyncMemoryClient("http://srv", "key", context=CTX, transport=transport) as c:
            for op, args in CALLS:
                with pytest.raises(AttestorError):
                    await getattr(c, op)(*args)

    asyncio.run(run())
    assert len(seen) == len(CALLS)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_is_not_followed_with_the_key(status: int) -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        location = "http://evil.example/v1/memories"
        return httpx.Response(status, headers={"location": location}, content=b"")

    transport = httpx.MockTransport(handle)
    client = MemoryClient("http://srv", "key", context=CTX, transport=transport)
    with client, pytest.raises(AttestorError):
        client.add("Ann likes tea")
    assert [r.url.host for r in seen] == ["srv"]
