"""Session 27 attack: after a re-embedding or a retention run, a purge warned of digests that are
not there.

A purge counts the tenant's audit entries holding unkeyed digests (``sha256:<hex>``,
``legacy_digest_entries``) and warns that they were written before salts (schema 8) and
confirm an exact guess of an erased text. Entries about the tenant itself, not a row, hash
their free text without a key too: a ``reembed`` entry its embedding spaces' labels
("hashing-v1-64 (64-d)"), retention entries the policy as configured (its name, category
and tags). Neither is a text of any row. On a store that never held a row written before
salts, every purge after a re-embedding or a retention run said that erased texts could
still be confirmed from the chain (3 entries: a retention run that archived a row, and a
re-embedding), and ``doctor`` said so beforehand. A residue sweep of the store's folder
after a re-embed, a compaction and a re-embed killed part-way found no word of the subject.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.cli.doctor import run_doctor
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")
POLICY = {"name": "drop old notes", "action": "archive", "older_than": "1d"}


def _memory(path: Path, clock: ManualClock, dimension: int = 64) -> AgentMemory:
    config = Config(path=str(path))
    return AgentMemory(config=config, embedder=HashingEmbedder(dimension), clock=clock)


def _tenant_wide_entries(tmp_path: Path) -> Path:
    """A store whose subject went through a retention run and a re-embedding."""
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    mem = _memory(tmp_path / "m.db", clock)
    mem.add("Alice Marsh likes coffee", tags=["a note"], context=SUBJECT)
    mem.add("Alice Marsh lives in Bern", context=SUBJECT)
    clock.advance(days=3)
    policy = {**POLICY, "tags": ["a note"]}  # archives the first
    assert mem.apply_retention([policy], context=SUBJECT).ok
    mem.close()
    mem = _memory(tmp_path / "m.db", clock, dimension=32)  # another embedder: re-embed
    assert mem.reembed(context=SUBJECT)["status"] == "reembedded"
    mem.close()
    return tmp_path / "m.db"


def test_a_purge_after_a_reembedding_and_a_retention_run_reports_no_pre_salt_digests(
    tmp_path: Path,
) -> None:
    path = _tenant_wide_entries(tmp_path)
    mem = _memory(path, ManualClock(datetime(2026, 2, 1, tzinfo=UTC)), dimension=32)
    report = mem.purge_user("subject", "erasure request", context=SUBJECT)
    assert report.ok, report.to_dict()
    assert report.legacy_digest_entries == 0
    assert not [w for w in report.warnings if "before salts" in w], report.warnings
    mem.close()


def test_doctor_reports_no_pre_salt_digests_after_a_reembedding_and_a_retention_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _tenant_wide_entries(tmp_path)
    monkeypatch.setenv("ATTESTOR_TENANT", "subject")
    config = Config(path=str(path))
    report = run_doctor(config, embedder=HashingEmbedder(32)).to_dict()
    [check] = [c for c in report["checks"] if c["name"] == "audit.legacy_digests"]
    assert check["ok"] is True, check
