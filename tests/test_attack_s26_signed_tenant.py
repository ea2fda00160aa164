"""A memory's signature covers its tenant and namespace (``ed25519v2:``).

The signature was over ``id | agent_id | t_created | digest(content)`` only, so a signed
row kept verifying wherever it was put: tenant A's export with every ``tenant`` field
rewritten to B (header, rows and audit entries alike) was restored into B with A's ids,
and ``verify_all`` vouched for every row as the service's signed write in B; a row moved
to another tenant or namespace in the file passed ``verify_memory`` there. New signatures
are over ``attestor-memory-v2 | tenant | namespace | id | agent_id | t_created | digest``;
a signature made before (``ed25519:``) still verifies over the old message."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest
from forged_chain import rechained

from attestor_arango.clock import to_us
from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer, signed_message
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.models import content_digest

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="n1")


def _mem(path: Path, signer: Signer) -> AgentMemory:
    mem = AgentMemory(path, embedder=HashingEmbedder(64))
    mem.signer = signer
    return mem


def test_the_signed_message_names_tenant_and_namespace(tmp_path: Path) -> None:
    mem = _mem(tmp_path / "memory.db", Signer.generate())
    m = mem.add("Ann lives in Oslo", context=A)
    assert m.signature is not None and m.signature.startswith("ed25519v2:")
    assert signed_message(m).decode().split("|") == [
        "attestor-memory-v2",
        "acme",
        "n1",
        m.id,
        "orch",
        str(to_us(m.t_created)),
        content_digest("Ann lives in Oslo", m.salt),
    ]
    mem.close()


def test_an_export_rewritten_to_another_tenant_does_not_verify_there(tmp_path: Path) -> None:
    mem = _mem(tmp_path / "memory.db", Signer.generate())
    mem.add("Ann lives in Oslo", context=A)
    mem.add("Ann likes tea", context=A)
    text = json.dumps(mem.export_user("acme", context=A))
    forged = json.loads(text.replace('"tenant": "acme"', '"tenant": "beta"'))
    # its chain's hashes cover the tenant: the import refuses it (import_source.py); without
    # the chain it is taken as beta's own, and the signatures still tell
    # (and its signed head names acme: session 27)
    with pytest.raises(ValidationError, match=r"does not match its own audit chain|signature"):
        mem.import_user(forged, context=B)
    assert mem.import_user(rechained(forged), context=B)["rekeyed"] == 0
    report = mem.verify_all(context=B)
    assert not report["ok"] and len(report["invalid"]) == 2, report
    mem.close()


def test_a_row_moved_in_the_file_fails_its_signature(tmp_path: Path) -> None:
    mem = _mem(tmp_path / "memory.db", Signer.generate())
    moved = mem.add("Ann lives in Oslo", context=A)
    renamed = mem.add("Ann likes tea", context=A)
    conn = sqlite3.connect(tmp_path / "memory.db")
    conn.execute("UPDATE memories SET tenant = 'beta' WHERE id = ?", (moved.id,))
    conn.execute("UPDATE memories SET namespace = 'n2' WHERE id = ?", (renamed.id,))
    conn.commit()
    conn.close()
    assert not mem.verify_memory(moved.id, context=B)
    assert not mem.verify_memory(renamed.id, context=A)
    mem.close()


def test_a_signature_made_before_still_verifies(tmp_path: Path) -> None:
    signer = Signer.generate()
    mem = _mem(tmp_path / "memory.db", signer)
    m = mem.add("Ann lives in Oslo", context=A)
    old_message = f"{m.id}|orch|{to_us(m.t_created)}|{content_digest(m.content, m.salt)}"
    old = "ed25519:" + base64.b64encode(signer._key.sign(old_message.encode())).decode()
    conn = sqlite3.connect(tmp_path / "memory.db")
    conn.execute("UPDATE memories SET signature = ? WHERE id = ?", (old, m.id))
    conn.commit()
    conn.close()
    assert mem.verify_memory(m.id, context=A)
    # an old signature relabelled as new is checked over the new message, and fails
    conn = sqlite3.connect(tmp_path / "memory.db")
    conn.execute("UPDATE memories SET signature = ? WHERE id = ?", ("ed25519v2:" + old[8:], m.id))
    conn.commit()
    conn.close()
    assert not mem.verify_memory(m.id, context=A)
    mem.close()
