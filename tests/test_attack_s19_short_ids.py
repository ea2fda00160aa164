"""Session 19 attack battery: ``update`` refused the short id ``get`` and ``forget`` take.

Tables show ids by their last 8 characters, and ``get`` and ``forget`` resolve such a
short id (or a start of the id) to the one id of the scope it names; ``update`` looked the
fragment up as a whole id and answered "not found" for a memory the caller had just
listed. It now resolves it the same way (one resolver, ``core.reads.resolve_id``): an
ambiguous fragment is refused naming the matches, and nothing is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, SigningSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory


def test_update_takes_the_short_id_a_table_shows(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    new = mem.update(ours[-8:], content="Ann likes mint tea", context=CTX)
    assert new.content == "Ann likes mint tea" and new.id != ours
    assert mem.get(ours, context=CTX).superseded_by == new.id
    mem.close()


def test_update_refuses_an_ambiguous_short_id_and_stores_nothing(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ours = mem.add("Ann likes green tea", entity="ann", context=CTX).id
    other = mem.add("Cy likes juice", entity="cy", context=CTX)
    prefix = ours[:8]
    assert other.id.startswith(prefix)  # UUIDv7 ids made in the same minute share it
    before = stored(mem, with_audit=False)
    with pytest.raises(ValidationError, match="matches several memory ids"):
        mem.update(prefix, content="hijacked", context=CTX)
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_the_evidence_boards_memory_page_verifies_the_memory_a_short_id_names(
    tmp_path: Path,
) -> None:
    """The page resolved the short id for the memory but checked the signature of the
    fragment itself: a signed memory opened by its short id showed "not checked: no
    memory ... in tenant" beside its valid signature."""
    config = Config(path=str(tmp_path / "m.db"), signing=SigningSettings(enabled=True))
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=ManualClock())
    ours = mem.add("Ann likes green tea", entity="ann", context=CTX).id
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    page = client.get(f"/ui/memory/{ours[-8:]}", headers=AUTH)
    assert page.status_code == 200, page.text
    status = page.text.split('data-testid="signature-status">', 1)[1].split("</dd>", 1)[0]
    assert "valid Ed25519 signature" in status and "not checked" not in status, status
    mem.close()


def test_a_full_id_in_capitals_or_with_spaces_names_the_memory(tmp_path: Path) -> None:
    """A UUID is read case-insensitively (RFC 9562); an agent that upper-cases an id, or a
    person who copies it with a space, got "not found" from get, update and forget, while a
    short id of the same characters was found."""
    mem, ours, _ = seeded(tmp_path / "m.db")
    assert mem.get(ours.upper(), context=CTX).id == ours
    assert mem.get(f" {ours} ", context=CTX).id == ours
    new = mem.update(ours.upper(), content="Ann likes mint tea", context=CTX)
    assert mem.forget(new.id.upper(), context=CTX).id == new.id
    mem.close()
