"""Session 29 attack: the last second of the year 9999 was "outside the years 1-9999".

``as_of="9999-12-31T23:59:59Z"`` (a caller asking for "the latest", or a UI's slider at its
end) was refused with ``as_of: '9999-12-31T23:59:59Z' is outside the years 1-9999``, a
message that is false on its face, while one second earlier was refused as "in the
future". That instant is the store's mark for "no end" (``clock.OPEN``), so no time may
equal it, but the refusal must say so: an ``as_of`` at or past it is in the future like
any other, and a ``valid_from``, ``valid_until``, window end or turn time there is refused
as the mark of an open end, not as a year the caller did not write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory

LAST = "9999-12-31T23:59:59Z"
FUTURE: list[Any] = [LAST, "9999-12-31T23:59:59.999999Z", 253_402_300_799, 253_402_300_799.5]
FALSE = "outside the years 1-9999"


def _reads(mem: AgentMemory, memory_id: str) -> dict[str, Any]:
    return {
        "list": lambda a: mem.list(as_of=a, context=CTX),
        "list_page": lambda a: mem.list_page(as_of=a, context=CTX),
        "count": lambda a: mem.count(as_of=a, context=CTX),
        "get": lambda a: mem.get(memory_id, as_of=a, context=CTX),
        "timeline": lambda a: mem.timeline("ann", as_of=a, context=CTX),
        "search": lambda a: mem.search("tea", as_of=a, context=CTX),
        "recall": lambda a: mem.recall("tea", as_of=a, context=CTX),
        "recall_as_pack": lambda a: mem.recall_as_pack("tea", as_of=a, context=CTX),
        "current_facts": lambda a: mem.current_facts(as_of=a, context=CTX),
    }


@pytest.mark.parametrize("as_of", FUTURE)
def test_an_as_of_at_the_end_of_9999_is_in_the_future(tmp_path: Path, as_of: Any) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    for op, read in _reads(mem, ours).items():
        with pytest.raises(ValidationError) as refused:
            read(as_of)
        assert "in the future" in refused.value.message, (op, refused.value.message)
    assert stored(mem) == before
    mem.close()


def test_other_times_there_are_refused_as_the_open_end(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    writes = {
        "valid_from": lambda: mem.add("Ann likes tea", valid_from=LAST, context=CTX),
        "valid_until": lambda: mem.add("Ann likes tea", valid_until=LAST, context=CTX),
        "window end": lambda: mem.list(time_window=("2020-01-01T00:00:00Z", LAST), context=CTX),
        "turn time": lambda: mem.add_turns(
            [{"speaker": "ann", "text": "hi", "timestamp": LAST}], context=CTX
        ),
    }
    for name, call in writes.items():
        with pytest.raises(ValidationError) as refused:
            call()
        message = refused.value.message
        assert FALSE not in message, (name, message)
        assert "no end" in message, (name, message)
    assert stored(mem) == before
    mem.close()


def test_times_beyond_9999_keep_their_message(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    for valid_from in (1e12, "9999-12-31T23:59:59-01:00", -1e11):  # UTC year 10000 / year 1
        with pytest.raises(ValidationError, match=FALSE):
            mem.add("Ann likes tea", valid_from=valid_from, context=CTX)
    with pytest.raises(ValidationError, match=FALSE):
        mem.list(as_of=-1e11, context=CTX)
    mem.close()


def test_rest_says_in_the_future_too(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    r = client.post("/v1/memories/list", json={"as_of": LAST}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert "in the future" in r.json()["message"], r.text
    r = client.post("/v1/memories/page", json={"as_of": LAST}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert "in the future" in r.json()["message"], r.text
    assert stored(mem) == before
    mem.close()
