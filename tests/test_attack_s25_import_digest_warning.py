"""Session 25 attack: a purge after an import warned of digests that are not there.

``import_user`` records its source in the chain, the source chain's last hash among it
(``source.audit_last_hash``: 64 hex characters). The purge's count of entries holding
unkeyed digests (``legacy_digest_entries``, written before salts, schema 8) took that
hash for one: every purge of a tenant that had ever been restored from an export said
that an exact guess of an erased text could still be confirmed from the chain, and
``doctor`` said so beforehand, on a store that never held an unsalted row. A chain hash
is computed over the entry's keyed digests; it confirms no guess of any text.

Rows imported without a salt (exported from a store before schema 8) do leave plain
digests in the import's entry, and those are still counted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.core import writes
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.cli.doctor import run_doctor
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject")


def _memory(tmp_path: Path) -> AgentMemory:
    return AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())


def _restored(mem: AgentMemory) -> None:
    """The subject's tenant exported, erased and restored from its export."""
    data = mem.export_user("subject", context=SUBJECT)
    assert mem.purge_user("subject", "restore drill", context=SUBJECT).ok
    mem.import_user(data, context=SUBJECT)


def test_a_purge_after_an_import_of_salted_rows_reports_no_pre_salt_digests(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path)
    mem.add("Alice Marsh likes coffee", entity="alice", category="drink", context=SUBJECT)
    mem.ingest_round({"user": "I live in Zurich."}, context=SUBJECT)
    _restored(mem)

    report = mem.purge_user("subject", "erasure request", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert report.legacy_digest_entries == 0
    assert not [w for w in report.warnings if "before salts" in w], report.warnings
    outcome = mem.audit_log(limit=1000, context=SUBJECT)[-1]
    assert outcome.action == "purge_completed"
    assert outcome.details["legacy_digest_entries"] == 0
    mem.close()


def test_doctor_reports_no_pre_salt_digests_for_a_restored_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(path=str(tmp_path / "m.db"))
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64))
    mem.add("Alice Marsh likes coffee", context=SUBJECT)
    _restored(mem)
    mem.close()

    monkeypatch.setenv("ATTESTOR_TENANT", "subject")
    report = run_doctor(config, embedder=HashingEmbedder(64)).to_dict()
    [check] = [c for c in report["checks"] if c["name"] == "audit.legacy_digests"]
    assert check["ok"] is True, check
    assert "no pre-salt digests" in str(check["detail"])


def test_rows_imported_without_a_salt_are_still_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _memory(tmp_path)
    with monkeypatch.context() as p:  # rows written the way a store before schema 8 did
        p.setattr(writes, "new_salt", lambda ids: None)
        old = mem.add("Alice Marsh has condition-7", context=SUBJECT)
    assert old.salt is None
    _restored(mem)  # the import's entry holds the unsalted row's plain digests

    report = mem.purge_user("subject", "erasure request", context=SUBJECT)

    assert report.ok, report.to_dict()
    # the add (before the restore drill's purge) and the import's entry
    assert report.legacy_digest_entries == 2
    assert [w for w in report.warnings if "before salts" in w]
    mem.close()
