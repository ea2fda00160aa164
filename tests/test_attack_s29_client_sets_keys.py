"""Session 29 attack: the HTTP client sent what the library refuses.

``MemoryClient`` is a drop-in for ``AgentMemory``: the same call gets the same answer. The
client converted a set or frozenset anywhere in an argument into a sorted list and a
dict's non-string keys into their ``str()``, so ``tags={"b", "a"}`` was stored as
``["a", "b"]`` and ``metadata={(1, 2): "x"}`` as ``{"(1, 2)": "x"}``, where ``AgentMemory``
refuses both with a ``ValidationError`` (a set has no order the stored bytes could keep;
"metadata must be a JSON object (a dict with string keys)"). The library itself took a
metadata key ``1``, ``True`` or ``None`` and stored it as ``"1"``, ``"true"``, ``"null"``
(and ``{1: "a", "1": "b"}`` silently as ``{"1": "b"}``), against its own message. Now each
is a ``ValidationError`` in both, and the client sends nothing.

Metadata holding a value JSON has no type for (a datetime, a Decimal, a path, a UUID, any
object) was sent as its text and stored, where ``AgentMemory`` refuses it ("metadata is not
JSON-serialisable"): the client now runs the library's ``check_metadata`` on the metadata it
sends (a call's own and each turn's), and refuses a value of no JSON type anywhere in an
argument (an entity ``Path("/x")``, content ``Decimal("1.5")``, an ``as_of`` date, an enum, a
UUID tag), which it sent as its ``str()`` and the server took.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from attestor_arango import AgentMemory
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.client import MemoryClient
from tests.attack_support import client_refusal

# every call here is refused by AgentMemory and must be refused, unsent, by the client
CALLS: dict[str, Callable[[Any], Any]] = {
    "tags as a set": lambda m: m.add("Ann likes tea", tags={"b", "a"}),
    "tags as a frozenset": lambda m: m.add("Ann likes tea", tags=frozenset({"a"})),
    "a set in metadata": lambda m: m.add("Ann likes tea", metadata={"seen": {2, 1}}),
    "a tuple key in metadata": lambda m: m.add("Ann likes tea", metadata={(1, 2): "x"}),
    "an int key in metadata": lambda m: m.add("Ann likes tea", metadata={1: "x"}),
    "a bool key in metadata": lambda m: m.add("Ann likes tea", metadata={True: "x"}),
    "a None key in metadata": lambda m: m.add("Ann likes tea", metadata={None: "x"}),
    "an int key beside its text": lambda m: m.add("Ann", metadata={1: "a", "1": "b"}),
    "a nested int key": lambda m: m.add("Ann likes tea", metadata={"a": {7: "x"}}),
    "tags filter as a set": lambda m: m.list(tags={"a"}),
    "search tags as a set": lambda m: m.search("tea", tags={"a"}),
    "a time window as a set": lambda m: m.recall("tea", time_window={1, 2}),
    "a set in a turn's metadata": lambda m: m.add_turns(
        [{"speaker": "ann", "text": "hi", "metadata": {"x": {1}}}]
    ),
    "an int key in a turn": lambda m: m.add_turns([{"speaker": "ann", "text": "hi", 1: "x"}]),
    "update tags as a set": lambda m: m.update("m-1", tags={"a"}),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_the_client_refuses_unsent_what_the_library_refuses(call: str, mem: AgentMemory) -> None:
    with pytest.raises(ValidationError):
        CALLS[call](mem)
    assert mem.count() == 0
    _, sent = client_refusal(CALLS[call])
    assert sent == []


def test_the_refusals_say_what_to_send() -> None:
    error, _ = client_refusal(CALLS["tags as a set"])
    assert "set" in error.message and "list" in error.message, error.message
    error, _ = client_refusal(CALLS["a tuple key in metadata"])
    assert "key" in error.message and "string" in error.message, error.message


def test_lists_tuples_and_string_keys_still_travel(mem: AgentMemory) -> None:
    bodies: list[bytes] = []

    def server(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        return httpx.Response(500, json={"code": "attestor_error", "message": "reached"})

    client = MemoryClient("http://memory", "key", transport=httpx.MockTransport(server))
    with client, pytest.raises(Exception, match="reached"):
        client.add("Ann likes tea", tags=("b", "a"), metadata={"a": {"b": [1, (2, 3)]}})
    assert b'"tags": ["b", "a"]' in bodies[0]
    assert b'"metadata": {"a": {"b": [1, [2, 3]]}}' in bodies[0]
    stored = mem.add("Ann likes tea", tags=("b", "a"), metadata={"a": {"b": [1, (2, 3)]}})
    assert stored.tags == ("b", "a")
    assert stored.metadata == {"a": {"b": [1, [2, 3]]}}


# values JSON has no type for: ``codec.jsonable`` sent their text (an ISO time, "1.5", a
# path, "<object object at 0x...>") and the server stored it; ``AgentMemory`` refuses them
# in metadata ("metadata is not JSON-serialisable"), a turn's metadata too
UNTYPED: dict[str, Callable[[Any], Any]] = {
    "a time in metadata": lambda m: m.add(
        "Ann likes tea", metadata={"at": datetime(2026, 1, 1, tzinfo=UTC)}
    ),
    "a decimal in metadata": lambda m: m.add("Ann likes tea", metadata={"n": Decimal("1.5")}),
    "a path in metadata": lambda m: m.add("Ann likes tea", metadata={"p": [Path("/x")]}),
    "an object in metadata": lambda m: m.add("Ann likes tea", metadata={"o": object()}),
    "a uuid in a turn's metadata": lambda m: m.add_turns(
        [{"speaker": "ann", "text": "hi", "metadata": {"u": UUID(int=1)}}]
    ),
    "a time in an ingested turn's metadata": lambda m: m.ingest_round(
        {"user": "I like tea", "metadata": {"at": datetime(2026, 1, 1, tzinfo=UTC)}}
    ),
}


@pytest.mark.parametrize("call", list(UNTYPED))
def test_metadata_json_cannot_hold_is_refused_unsent(call: str, mem: AgentMemory) -> None:
    with pytest.raises(ValidationError) as library:
        UNTYPED[call](mem)
    assert mem.count() == 0
    error, sent = client_refusal(UNTYPED[call])
    assert sent == []
    assert "metadata is not JSON-serialisable" in library.value.message
    assert "JSON" in error.message, error.message


class _Colour(Enum):
    RED = "red"


# a value of no JSON type as an argument: ``codec.jsonable`` sent its ``str()`` (or a numpy
# integer's ``item()``), which the server took (an entity "/x", content "1.5", as_of
# "2026-01-01"); ``AgentMemory`` refuses each with a ``ValidationError``
ARGUMENTS: dict[str, Callable[[Any], Any]] = {
    "content as a Decimal": lambda m: m.add(Decimal("1.5")),
    "entity as a path": lambda m: m.add("Ann likes tea", entity=Path("/x")),
    "a category as an enum": lambda m: m.add("Ann likes tea", category=_Colour.RED),
    "a tag as a UUID": lambda m: m.add("Ann likes tea", tags=[UUID(int=1)]),
    "as_of as a date": lambda m: m.list(as_of=date(2026, 1, 1)),
    "a window end as a date": lambda m: m.recall(
        "tea", time_window=("2026-01-01T00:00:00Z", date(2026, 1, 2))
    ),
    "a query as an object": lambda m: m.search(object()),
    "a timeline entity as a path": lambda m: m.timeline(Path("ann")),
    "a turn's speaker as a path": lambda m: m.add_turns([{"speaker": Path("ann"), "text": "hi"}]),
}


@pytest.mark.parametrize("call", list(ARGUMENTS))
def test_an_argument_json_has_no_type_for_is_refused_unsent(call: str, mem: AgentMemory) -> None:
    with pytest.raises(ValidationError):
        ARGUMENTS[call](mem)
    assert mem.count() == 0
    error, sent = client_refusal(ARGUMENTS[call])
    assert sent == []
    assert "JSON" in error.message, error.message
