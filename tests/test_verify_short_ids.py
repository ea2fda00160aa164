"""``verify_memory`` takes the short ids ``get``, ``update``, ``forget`` and ``history`` take.

Tables show ids by their last 8 characters, and every other call naming one memory
resolves such a short id (or a start of the id) to the one id it names
(``core.reads.resolve_id``); ``verify_memory`` (and its REST twin) looked the fragment up
as a whole id and answered "not found" for a memory the caller had just listed. It now
resolves it the same way, over the rows it verifies (the tenant's, every namespace), with
the same ambiguous error; a fragment naming no row is False, as a whole id naming none
(Attestor's bool, session 31: ``tests/test_attestor_verify_memory.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, OTHER, acme_ring
from starlette.testclient import TestClient

from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, SigningSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory


def _signed(folder: Path) -> AgentMemory:
    config = Config(path=str(folder / "m.db"), signing=SigningSettings(enabled=True))
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())


def test_verify_takes_the_short_id_a_table_shows(tmp_path: Path) -> None:
    mem = _signed(tmp_path)
    ours = mem.add("Ann likes green tea", entity="ann", context=CTX).id
    assert mem.verify_memory(ours[-8:], context=CTX) is True
    assert mem.verify_memory(ours.upper(), context=CTX) is True
    assert mem.verify_memory(f" {ours[:13]} ", context=CTX) is True
    mem.close()


def test_verify_refuses_an_ambiguous_short_id_naming_the_matches(tmp_path: Path) -> None:
    mem = _signed(tmp_path)
    ours = mem.add("Ann likes green tea", entity="ann", context=CTX).id
    other = mem.add("Cy likes juice", entity="cy", context=CTX).id
    prefix = ours[:8]
    assert other.startswith(prefix)  # UUIDv7 ids made in the same minute share it
    with pytest.raises(ValidationError, match="matches several memory ids") as refused:
        mem.verify_memory(prefix, context=CTX)
    assert ours in str(refused.value) and other in str(refused.value)
    assert mem.verify_memory("abcdef12", context=CTX) is False
    mem.close()


def test_a_short_id_of_another_tenant_verifies_nothing(tmp_path: Path) -> None:
    mem = _signed(tmp_path)
    theirs = mem.add("Bob likes coffee", entity="bob", context=OTHER).id
    assert mem.verify_memory(theirs[-8:], context=CTX) is False
    assert mem.verify_memory(theirs, context=CTX) is False
    assert mem.verify_memory(theirs, context=OTHER) is True
    mem.close()


def test_the_rest_twin_takes_short_ids_with_the_same_errors(tmp_path: Path) -> None:
    mem = _signed(tmp_path)
    ours = mem.add("Ann likes green tea", entity="ann", context=CTX).id
    other = mem.add("Cy likes juice", entity="cy", context=CTX).id
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    done = client.get(f"/v1/memories/{ours[-8:]}/verify", headers=AUTH)
    assert done.status_code == 200 and done.json() is True, done.text
    ambiguous = client.get(f"/v1/memories/{ours[:8]}/verify", headers=AUTH)
    assert ambiguous.status_code in (400, 422), ambiguous.text
    assert "matches several memory ids" in ambiguous.text and other in ambiguous.text
    missing = client.get("/v1/memories/abcdef12/verify", headers=AUTH)
    assert missing.status_code == 200 and missing.json() is False, missing.text
    mem.close()
