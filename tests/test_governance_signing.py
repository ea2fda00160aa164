"""Ed25519 provenance: keys on disk, signing every write, detecting edits."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole, ValidationError
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, SigningSettings
from attestor_arango.core.signing import KeyFileError, Signer, signed_message
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import content_digest, content_hash

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="p1")


def _signed_mem(tmp_path: Path, clock: ManualClock, key: Path | None = None) -> AgentMemory:
    config = Config(
        path=str(tmp_path / "signed.db"),
        signing=SigningSettings(enabled=True, key_path=None if key is None else str(key)),
    )
    return AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(5)
    )


def _tamper(mem: AgentMemory, sql: str, *args: object) -> None:
    conn = sqlite3.connect(str(mem.store.path))  # type: ignore[attr-defined]
    try:
        conn.execute(sql, args)
        conn.commit()
    finally:
        conn.close()


def test_key_is_generated_with_owner_only_mode_and_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "k.pem"
    signer = Signer.from_file(path, create=True)
    assert (path.stat().st_mode & 0o777) == 0o600
    again = Signer.from_file(path)
    assert again.key_id == signer.key_id
    with pytest.raises(KeyFileError, match="already exists"):
        Signer.generate().save(path)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_group_or_world_readable_key_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "k.pem"
    Signer.generate().save(path)
    os.chmod(path, mode)
    with pytest.raises(KeyFileError, match="chmod 600"):
        Signer.from_file(path)


def test_missing_or_foreign_key_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="does not exist"):
        Signer.from_file(tmp_path / "none.pem")
    junk = tmp_path / "junk.pem"
    fd = os.open(junk, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"not a key")
    os.close(fd)
    with pytest.raises(KeyFileError, match="not an unencrypted PEM"):
        Signer.from_file(junk)
    assert issubclass(KeyFileError, ValidationError)


def test_every_write_is_signed_over_id_agent_time_and_content(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _signed_mem(tmp_path, clock)
    assert mem.signer is not None
    assert (tmp_path / "signing_key.pem").exists()  # generated next to the database
    a = mem.add("Alice leads design", entity="alice", category="role", context=ORCH)
    b = mem.update(a.id, content="Alice leads research", context=ORCH)
    assert a.signature and b.signature and a.signature != b.signature
    msg = signed_message(a).decode()
    assert msg.split("|") == [
        "attestor-memory-v2",
        a.tenant,
        a.namespace,
        a.id,
        "orch",
        str(int(a.t_created.timestamp() * 1_000_000)),
        content_digest("Alice leads design", a.salt),  # keyed by the row's salt
    ]
    assert a.salt is not None and msg.split("|")[6].startswith("hmac1:")
    # a signature made before v2 was over the last four fields alone
    assert signed_message(a, version=1).decode().split("|") == msg.split("|")[3:]
    assert content_hash("Alice leads design") not in msg
    assert mem.verify_memory(a.id, context=ORCH) and mem.verify_memory(b.id, context=ORCH)
    report = mem.verify_all(context=ORCH.as_agent("mon", AgentRole.MONITOR))
    assert report["ok"] and report["checked"] == 2 and report["valid"] == 2
    mem.close()


def test_content_change_after_signing_fails_verification(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _signed_mem(tmp_path, clock)
    a = mem.add("The vault code is 1234", context=ORCH)
    b = mem.add("Deploys are on Fridays", context=ORCH)
    c = mem.add("Carol owns billing", context=ORCH)
    # an attacker edits content AND rewrites the stored hash to match: still caught
    _tamper(
        mem,
        "UPDATE memories SET content = ?, content_hash = ? WHERE id = ?",
        "The vault code is 9999",
        content_hash("The vault code is 9999"),
        a.id,
    )
    _tamper(mem, "UPDATE memories SET agent_id = 'intruder' WHERE id = ?", b.id)
    assert mem.verify_memory(a.id, context=ORCH) is False
    assert mem.verify_memory(b.id, context=ORCH) is False
    assert mem.verify_memory(c.id, context=ORCH) is True
    report = mem.verify_all(context=ORCH)
    assert set(report["invalid"]) == {a.id, b.id}
    assert not report["ok"] and report["valid"] == 1
    mem.close()


def test_unsigned_rows_and_other_keys_are_reported(tmp_path: Path, clock: ManualClock) -> None:
    mem = _signed_mem(tmp_path, clock)
    a = mem.add("signed fact", context=ORCH)
    _tamper(mem, "UPDATE memories SET signature = NULL WHERE id = ?", a.id)
    assert mem.verify_memory(a.id, context=ORCH) is False
    assert mem.verify_all(context=ORCH)["unsigned"] == [a.id]
    b = mem.add("another signed fact", context=ORCH)
    mem.signer = Signer.generate()  # a different key does not vouch for b
    assert mem.verify_memory(b.id, context=ORCH) is False
    mem.close()


def test_configured_key_path_is_used_and_must_exist(tmp_path: Path, clock: ManualClock) -> None:
    key = tmp_path / "ops.pem"
    with pytest.raises(KeyFileError):
        _signed_mem(tmp_path, clock, key)
    Signer.generate().save(key)
    mem = _signed_mem(tmp_path, clock, key)
    assert mem.signer is not None and mem.signer.key_id == Signer.from_file(key).key_id
    mem.close()


def test_signing_off_by_default_and_verify_says_how_to_enable(mem: AgentMemory) -> None:
    assert mem.signer is None
    a = mem.add("unsigned by default", context=ORCH)
    assert a.signature is None
    with pytest.raises(ValidationError, match=r"signing\.enabled"):
        mem.verify_memory(a.id, context=ORCH)


def test_an_export_carries_what_an_auditor_needs_to_verify_offline(
    tmp_path: Path, clock: ManualClock
) -> None:
    from attestor_arango.core.signing import verify_with_public_key
    from attestor_arango.models import Memory

    mem = _signed_mem(tmp_path, clock)
    mem.add("Alice approved the budget", context=ORCH)
    mem.add("Bob signed the contract", context=ORCH)
    data = mem.export_user("acme", context=ORCH)
    assert mem.signer is not None and data["signing"]["key_id"] == mem.signer.key_id
    pem = data["signing"]["public_key"]
    rows = [Memory.model_validate(d) for d in data["memories"]]
    assert all(verify_with_public_key(pem, m) for m in rows)
    forged = rows[0].model_copy(update={"content": "Alice rejected the budget"})
    assert not verify_with_public_key(pem, forged)
    assert not verify_with_public_key(Signer.generate().public_pem(), rows[0])
    with pytest.raises(KeyFileError):
        verify_with_public_key("not a key", rows[0])
    mem.close()
