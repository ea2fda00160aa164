"""Attack: bytes handed to the HTTP client where text belongs.

``AgentMemory.add(b"x")`` is refused (content must be a string), but ``MemoryClient``
turned bytes into their ``str()``, so the server stored the text ``b'x'`` as the
memory (and ``b'a'`` as a tag, a metadata value, a query). The client now refuses
bytes with a ``ValidationError`` before any request, as the library does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.client import MemoryClient

CALLS: dict[str, Callable[[MemoryClient], Any]] = {
    "content": lambda c: c.add(b"Ann moved to Oslo"),
    "a tag": lambda c: c.add("Ann", tags=[b"home"]),
    "a metadata value": lambda c: c.add("Ann", metadata={"source": bytearray(b"chat")}),
    "a recall query": lambda c: c.recall(b"where does Ann live"),
    "a turn's text": lambda c: c.add_turns([{"speaker": "a", "text": memoryview(b"hi")}]),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_bytes_are_refused_before_anything_is_sent(call: str) -> None:
    sent: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500, json={"code": "attestor_error", "message": "reached"})

    client = MemoryClient("http://memory", "key", transport=httpx.MockTransport(server))
    with client, pytest.raises(ValidationError, match="bytes are not text"):
        CALLS[call](client)
    assert sent == []
