"""Session 27 attack: a row signed before v2 (``ed25519:``) moved to another tenant by an import
still verified there.

A v1 signature is over ``id | agent_id | t_created | digest`` (no tenant, no namespace), so
it verifies wherever its row is put. Tenant A's export with every ``tenant`` field rewritten
to B and its chain rewritten to agree (an unsigned chain, as anyone can write) was restored
into B with A's ids and signatures, and ``verify_all`` in B counted the v1-signed row as the
service's signed write. An import now keeps a v1 signature only when the export's chain
head is signed by the importing store's own key (the head binds the chain, whose row
digests name each row's tenant and namespace); otherwise the row is restored unsigned. A
v2 signature names tenant and namespace itself and is kept as it was.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

from forged_chain import rechained

from attestor_arango.clock import to_us
from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer, export_message
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.models import content_digest

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="n1")


def _signed_before_v2(tmp_path: Path, signer: Signer) -> AgentMemory:
    """A store whose tenant acme holds one row signed the v1 way and one v2 row."""
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    mem.signer = signer
    m = mem.add("Ann lives in Oslo", context=A)
    mem.add("Ann likes tea", context=A)
    old = f"{m.id}|orch|{to_us(m.t_created)}|{content_digest(m.content, m.salt)}"
    sig = "ed25519:" + base64.b64encode(signer._key.sign(old.encode())).decode()
    conn = sqlite3.connect(tmp_path / "memory.db")
    conn.execute("UPDATE memories SET signature = ? WHERE id = ?", (sig, m.id))
    conn.commit()
    conn.close()
    assert mem.verify_all(context=A)["valid"] == 2  # the premise: both verify in acme
    return mem


def _moved_to_beta(mem: AgentMemory) -> dict[str, Any]:
    text = json.dumps(mem.export_user("acme", context=A))
    return rechained(json.loads(text.replace('"tenant": "acme"', '"tenant": "beta"')))


def test_a_v1_signed_row_moved_to_another_tenant_by_an_import_does_not_verify_there(
    tmp_path: Path,
) -> None:
    mem = _signed_before_v2(tmp_path, Signer.generate())
    assert mem.import_user(_moved_to_beta(mem), context=B)["rekeyed"] == 0  # ids kept
    report = mem.verify_all(context=B)
    assert report["valid"] == 0, report  # the v2 row fails, the v1 row is unsigned
    assert len(report["unsigned"]) == 1 and len(report["invalid"]) == 1, report
    mem.close()


def test_a_head_signed_by_another_key_does_not_keep_a_v1_signature(tmp_path: Path) -> None:
    mem = _signed_before_v2(tmp_path, Signer.generate())
    forged, other = _moved_to_beta(mem), Signer.generate()
    chain = forged["chain"]
    at, sections = forged["exported_at"], chain["sections"]
    message = export_message("beta", chain["entries"], chain["head"], at, sections)
    chain["signature"] = other.sign_export(message)
    forged["signing"] = {"key_id": other.key_id, "public_key": other.public_pem()}
    mem.import_user(forged, context=B)
    assert mem.verify_all(context=B)["valid"] == 0
    mem.close()


def test_a_v1_signed_row_restored_where_it_was_signed_still_verifies(tmp_path: Path) -> None:
    mem = _signed_before_v2(tmp_path, Signer.generate())
    data = json.loads(json.dumps(mem.export_user("acme", context=A)))
    assert mem.purge_user("acme", "restore drill", context=A).ok
    mem.import_user(data, context=A)
    report = mem.verify_all(context=A)
    assert report["ok"] and report["valid"] == 2, report
    mem.close()
