"""``verify_memory`` answers as Attestor's does, in process, over REST and through the client.

Attestor's ``verify_memory(memory_id) -> bool`` (its README: "returns bool"; its code:
True if signed and the signature matches, False if unsigned, missing or tampered) raises
``RuntimeError`` only when signing is not configured. Ours raised ``NotFoundError`` for an
id the tenant does not hold, and a ``ValidationError`` that is no ``RuntimeError`` when
signing was off, so code written for Attestor (``if not mem.verify_memory(i)``, ``except
RuntimeError``) broke. Now a missing id is False (another tenant's too: no existence
oracle), and signing off raises ``SigningDisabled``: a ``ValidationError`` (code
``signing_disabled``, 422) that is also a ``RuntimeError``, the same class through the
HTTP client. MCP and the CLI expose no ``verify_memory`` (Attestor's neither).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from attack_support import AUTH, CTX, OTHER, acme_ring
from interface_support import running_server
from starlette.testclient import TestClient

from attestor_arango.config import Config, SigningSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import SigningDisabled, ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

MISSING = "01a2530f-8ad6-7000-aaa9-000000000000"


def _memory(folder: Path, signing: bool) -> AgentMemory:
    config = Config(path=str(folder / "m.db"), signing=SigningSettings(enabled=signing))
    return AgentMemory(config=config, embedder=HashingEmbedder(64))


def _rows(mem: AgentMemory) -> dict[str, str]:
    """A signed row, a tampered one, an unsigned one (of the tenant), another tenant's."""
    rows = {
        "valid": mem.add("Ann likes green tea", context=CTX).id,
        "tampered": mem.add("The vault code is 1234", context=CTX).id,
        "unsigned": mem.add("Cy likes juice", context=CTX).id,
        "theirs": mem.add("Bob likes coffee", context=OTHER).id,
    }
    db = sqlite3.connect(Path(mem.store.path))  # type: ignore[attr-defined]
    db.execute("UPDATE memories SET agent_id = 'intruder' WHERE id = ?", (rows["tampered"],))
    db.execute("UPDATE memories SET signature = NULL WHERE id = ?", (rows["unsigned"],))
    db.commit()
    db.close()
    return rows


EXPECTED = {"valid": True, "tampered": False, "unsigned": False, "theirs": False}


def test_in_process_a_bool_for_every_row_question(tmp_path: Path) -> None:
    mem = _memory(tmp_path, signing=True)
    rows = _rows(mem)
    other = AgentMemory(config=mem.config, embedder=HashingEmbedder(64))  # reads the file
    for name, expected in EXPECTED.items():
        assert other.verify_memory(rows[name], context=CTX) is expected, name
    assert other.verify_memory(MISSING, context=CTX) is False  # was NotFoundError
    assert other.verify_memory(rows["theirs"], context=OTHER) is True
    with pytest.raises(ValidationError):  # not an id at all: still a typed refusal
        other.verify_memory("", context=CTX)
    other.close()
    mem.close()


def test_over_rest_and_the_client_the_same_answers(tmp_path: Path) -> None:
    mem = _memory(tmp_path, signing=True)
    rows = _rows(mem)
    other = AgentMemory(config=mem.config, embedder=HashingEmbedder(64))
    web = TestClient(create_app(other, keys=acme_ring()), raise_server_exceptions=False)
    for name, expected in [*EXPECTED.items(), ("missing", False)]:
        memory_id = rows.get(name, MISSING)
        done = web.get(f"/v1/memories/{memory_id}/verify", headers=AUTH)
        assert done.status_code == 200 and done.json() is expected, (name, done.text)
    with running_server(other, acme_ring()) as url, MemoryClient(url, "secret") as client:
        for name, expected in [*EXPECTED.items(), ("missing", False)]:
            assert client.verify_memory(rows.get(name, MISSING)) is expected, name
    other.close()
    mem.close()


def test_signing_off_raises_what_attestor_code_catches_everywhere(tmp_path: Path) -> None:
    mem = _memory(tmp_path, signing=False)
    fact = mem.add("Ann likes green tea", context=CTX).id
    for memory_id in (fact, MISSING):
        with pytest.raises(RuntimeError, match=r"signing\.enabled") as raised:
            mem.verify_memory(memory_id, context=CTX)
        assert isinstance(raised.value, SigningDisabled)
        assert isinstance(raised.value, ValidationError)  # as it was: nothing to fix here
    with pytest.raises(RuntimeError):
        mem.verify_all(context=CTX)
    web = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    refused = web.get(f"/v1/memories/{fact}/verify", headers=AUTH)
    assert refused.status_code == 422 and refused.json()["code"] == "signing_disabled"
    with running_server(mem, acme_ring()) as url, MemoryClient(url, "secret") as client:
        with pytest.raises(SigningDisabled) as remote:
            client.verify_memory(fact)
        assert isinstance(remote.value, RuntimeError)
    mem.close()
