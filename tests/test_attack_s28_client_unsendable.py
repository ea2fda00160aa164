"""Session 28 attack: the HTTP client raised untyped errors for arguments it cannot send.

``MemoryClient`` is a drop-in for ``AgentMemory`` (README: it raises the very class the
server would). Given what no JSON request carries, it raised before sending anything,
but not a ``ValidationError``: a value nested 5,000 deep (``RecursionError`` while
converting it), an id that is an integer of 5,000 digits (``ValueError`` from ``str``),
nested (``RecursionError``) or holding a lone surrogate (``UnicodeEncodeError`` from
``quote``), and an integer too long for JSON text was reported as "NaN and Infinity are
not JSON numbers". Bytes where text belongs were sent as their ``str()`` and stored as
the text "b'...'". Each is now a ``ValidationError`` saying what is wrong, and no request
leaves the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from attestor_arango.interfaces.client import MemoryClient
from tests.attack_support import client_refusal

HUGE = 10**5000


def _deep(n: int = 5000) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": [value]}
    return value


CALLS: dict[str, Callable[[MemoryClient], Any]] = {
    "metadata 5000 deep": lambda c: c.add("Ann", metadata={"a": _deep()}),
    "tags 5000 deep": lambda c: c.add("Ann", tags=[_deep()]),
    "a query argument 5000 deep": lambda c: c.list(as_of=_deep()),
    "a turn 5000 deep": lambda c: c.add_turns([{"speaker": "a", "text": _deep()}]),
    "an id of 5000 digits": lambda c: c.get(HUGE),
    "an id 5000 deep": lambda c: c.get(_deep()),
    "an id with a lone surrogate": lambda c: c.get("ab\ud800cd"),
    "a forgotten id of 5000 digits": lambda c: c.forget(HUGE),
    "a number too long for JSON text": lambda c: c.add("Ann", confidence=HUGE),
}


# bytes where text belongs: the client sent their ``str()``, so the server stored the
# text "b'...'" (``AgentMemory`` refuses bytes as content, tags, queries)
BYTES: dict[str, Callable[[MemoryClient], Any]] = {
    "content": lambda c: c.add(b"Ann moved to Oslo"),
    "a tag": lambda c: c.add("Ann", tags=[b"home"]),
    "a metadata value": lambda c: c.add("Ann", metadata={"source": bytearray(b"chat")}),
    "a recall query": lambda c: c.recall(b"where does Ann live"),
    "a turn's text": lambda c: c.add_turns([{"speaker": "a", "text": memoryview(b"hi")}]),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_an_unsendable_argument_is_a_validation_error_and_sends_nothing(call: str) -> None:
    error, sent = client_refusal(CALLS[call])
    assert sent == []
    assert "NaN" not in error.message, error.message


@pytest.mark.parametrize("call", list(BYTES))
def test_bytes_are_refused_before_anything_is_sent(call: str) -> None:
    error, sent = client_refusal(BYTES[call])
    assert sent == []
    assert "bytes are not text" in error.message, error.message
