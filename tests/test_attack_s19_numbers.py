"""Session 19 attack battery: metadata integers no store keeps.

JSON input refuses ``1e999`` and ``NaN`` because no store, ranking or other reader agrees
on them, but metadata took any integer: ``10**30`` or a 400-digit number was stored by
the embedded backend, while ArangoDB (VelocyPack holds 64-bit integers) turns a larger one
into a double or refuses the document, and a JavaScript client reads anything past 2**53
as another number. The same call had one meaning per backend. Metadata integers are
now held to signed 64 bits, on every surface, and a refused call stores nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app

BEYOND = [2**63, -(2**63) - 1, 10**30, 10**400]


@pytest.mark.parametrize("number", BEYOND, ids=["2**63", "-2**63-1", "10**30", "10**400"])
def test_add_refuses_a_metadata_integer_beyond_64_bits(tmp_path: Path, number: int) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    before = stored(mem, with_audit=False)
    nested: dict[str, Any] = {"a": [1, {"b": number}]}
    with pytest.raises(ValidationError, match="64 bits"):
        mem.add("Ann likes mint", metadata=nested, context=CTX)
    with pytest.raises(ValidationError, match="64 bits"):
        mem.update(ours, metadata={"n": number}, context=CTX)
    with pytest.raises(ValidationError, match="64 bits"):
        mem.ingest_round({"user": "I like mint.", "metadata": {"n": number}}, context=CTX)
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_the_64_bit_edges_are_kept_exactly(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    edges = {"top": 2**63 - 1, "bottom": -(2**63), "float": 1e308}
    kept = mem.add("Ann likes mint", metadata=edges, context=CTX)
    assert mem.get(kept.id, context=CTX).metadata == edges
    mem.close()


def test_rest_refuses_a_metadata_integer_beyond_64_bits(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem, with_audit=False)
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    body = b'{"content": "Ann likes mint", "metadata": {"n": ' + b"9" * 30 + b"}}"
    r = client.post(
        "/v1/memories", content=body, headers={**AUTH, "content-type": "application/json"}
    )
    assert r.status_code == 422 and "64 bits" in r.json()["message"], r.text
    assert stored(mem, with_audit=False) == before
    mem.close()
