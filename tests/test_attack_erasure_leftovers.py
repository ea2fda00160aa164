"""Attack battery: what a purge's own record, and rows written before salts, leave behind.

A purge's reason often names the subject ("erasure request of Alice Marsh"): kept as a plain
SHA-256 it confirms a guessed reason to anyone reading the chain after the erasure. It is
kept keyed by a random key the report hands to the caller and no store keeps
(``PurgeReport.reason_key``): the caller can prove the reason later, a guesser cannot.

Rows written before schema 8 (no salt) left plain digests in entries the chain cannot
rewrite: the purge cannot remove them, so it counts them and says so
(``PurgeReport.legacy_digest_entries`` and a warning), while a store of salted rows reports
none.

Entity keys of the same name in two Unicode normal forms, or two cases, are all erased
with the rows that named them (their bytes found in no file afterwards), while the entity
of another tenant holding the same words stays.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.core import writes
from attestor_arango.core.audit import digest_text
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest import pipeline
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")


def _memory(folder: Path, clock: ManualClock, seed: int) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), include_content=True)
    config = Config(path=str(folder / "mem.db"), trace=trace)
    return AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(seed)
    )


def _files_holding(folder: Path, needles: list[str]) -> list[str]:
    """Every (file, needle) where the needle's UTF-8 bytes are in a file under ``folder``."""
    out = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = f.read_bytes()
        out += [f"{n!r} in {f.name}" for n in needles if n.encode() in blob]
    return out


def _chain_text(mem: AgentMemory, ctx: AgentContext) -> str:
    return json.dumps([e.model_dump(mode="json") for e in mem.audit_log(limit=1000, context=ctx)])


def test_a_guessed_purge_reason_cannot_be_confirmed_but_its_key_proves_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _memory(tmp_path, clock, seed=1)
    mem.add("Alice Marsh lives in Zurich", context=SUBJECT)
    reason = "GDPR erasure request of Alice Marsh"

    report = mem.purge_user("subject", reason, context=SUBJECT)

    assert report.ok, report.to_dict()
    guess = digest_text(reason)  # what a reader who guesses the reason computes
    assert guess not in _chain_text(mem, SUBJECT)
    assert _files_holding(tmp_path, [guess, guess.removeprefix("sha256:")]) == []
    # the caller holds the key: with it, the reason is provable from the chain
    key = report.reason_key
    assert key is not None and report.to_dict()["reason_key"] == key
    attempt, outcome = mem.audit_log(limit=1000, context=SUBJECT)[-2:]
    assert attempt.action == "purge_attempted" and outcome.action == "purge_completed"
    assert attempt.details["reason"] == digest_text(reason, key)
    assert attempt.details["reason"] != digest_text("another reason", key)
    assert _files_holding(tmp_path, [key]) == []  # no store keeps the key
    assert mem.verify_audit_chain(context=SUBJECT).ok
    mem.close()


def test_purge_counts_and_warns_of_digests_written_before_salts(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _memory(tmp_path, clock, seed=2)
    with monkeypatch.context() as p:  # rows written the way a store before schema 8 did
        p.setattr(writes, "new_salt", lambda ids: None)
        p.setattr(pipeline, "new_salt", lambda ids: None)
        old = mem.add("Alice Marsh has condition-7", metadata={"note": "x"}, context=SUBJECT)
        mem.forget(old.id, reason="the subject asked", context=SUBJECT)
        mem.add("Alice Marsh likes tea", context=SUBJECT)
    assert old.salt is None  # the premise: unsalted, so its entries hold plain digests
    mem.add("Alice Marsh likes coffee", context=SUBJECT)  # salted: no plain digest
    mem.add("Bob likes tea", context=OTHER)

    report = mem.purge_user("subject", "erasure #1", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert report.legacy_digest_entries == 3  # two adds and the forget
    assert report.to_dict()["legacy_digest_entries"] == 3
    assert any("before salts" in w and "3 audit entries" in w for w in report.warnings)
    outcome = mem.audit_log(limit=1000, context=SUBJECT)[-1]
    assert outcome.details["legacy_digest_entries"] == 3
    assert mem.verify_audit_chain(context=SUBJECT).ok
    # a tenant of salted rows only: nothing to warn of
    other = mem.purge_user("other", "erasure #2", context=OTHER)
    assert other.ok and other.legacy_digest_entries == 0 and other.warnings == []
    mem.close()


def test_entity_keys_in_two_normal_forms_and_cases_are_all_erased(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _memory(tmp_path, clock, seed=3)
    nfc = unicodedata.normalize("NFC", "Caf\u00e9zorblat")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    for name in (nfc, nfd, nfc.upper()):
        mem.add(f"Quuxplorian drinks at {name}", entity=name, context=SUBJECT)
    mem.add(f"Bob drinks at {nfc}", entity=nfc, context=OTHER)  # the same words, kept
    mem.recall(f"where does Quuxplorian drink {nfd}", context=SUBJECT)
    assert len(mem.store.list_entities(Scope("subject"))) >= 1  # the premise

    assert mem.purge_user("subject", "erasure #3", context=SUBJECT).ok

    assert mem.store.list_entities(Scope("subject")) == []
    assert [e.name for e in mem.store.list_entities(Scope("other"))] == [nfc]
    mem.close()
    words = ["Quuxplorian", "quuxplorian", nfd, nfd.lower(), nfd.upper(), nfc.upper()]
    assert _files_holding(tmp_path, words) == []
    kept = _files_holding(tmp_path, [nfc.lower()])
    assert kept  # the other tenant's copy of the shared word stays


def test_purge_warns_of_the_exports_taken_before_it(tmp_path: Path, clock: ManualClock) -> None:
    """An export is a copy the purge cannot reach: the report says how many the chain
    records (and holds none of the erased words itself)."""
    mem = _memory(tmp_path, clock, seed=4)
    mem.add("Alice Marsh lives in Zurich", context=SUBJECT)
    mem.export_user("subject", context=SUBJECT)
    mem.export_user("subject", context=SUBJECT)

    report = mem.purge_user("subject", "erasure #4", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert [w for w in report.warnings if "before the purge: 2 " in w] == report.warnings
    assert len(report.warnings) == 1 and "Zurich" not in report.warnings[0]
    # a tenant never exported: no such warning
    mem.add("Bob likes tea", context=OTHER)
    assert mem.purge_user("other", "erasure #5", context=OTHER).warnings == []
    mem.close()


def test_purge_deletes_the_export_files_the_cli_wrote_of_the_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --output`` wrote the subject's words to a file: the service wrote it, so a
    purge of the tenant deletes it (another tenant's export file stays, and so does a file
    the user replaced with something else since)."""
    from attestor_arango.interfaces.cli.main import main

    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    store = tmp_path / "store"
    store.mkdir()
    db = str(store / "mem.db")

    def cli(*args: str) -> int:
        code = main(["--json", *args, "--path", db])
        capsys.readouterr()
        return code

    assert cli("add", "Quuxplorian drinks Glimmerwine", "--tenant", "subject") == 0
    assert cli("add", "Bob drinks Glimmerwine too", "--tenant", "other") == 0
    mine, theirs, replaced = store / "subject.json", tmp_path / "other.json", tmp_path / "r.json"
    assert cli("export", "--tenant", "subject", "--output", str(mine)) == 0
    assert cli("export", "--tenant", "subject", "--output", str(replaced)) == 0
    assert cli("export", "--tenant", "other", "--output", str(theirs)) == 0
    kept = tmp_path / "backup.json"  # a copy kept on purpose, to import after the purge
    assert cli("export", "--tenant", "subject", "--output", str(kept), "--keep") == 0
    assert b"Quuxplorian" in mine.read_bytes()  # the premise: the copy holds the words
    replaced.write_text("my own notes", encoding="utf-8")

    assert cli("purge", "--tenant", "subject", "--reason", "erasure #6", "--yes") == 0

    assert not mine.exists()
    assert replaced.read_text(encoding="utf-8") == "my own notes"
    assert b"Bob drinks" in theirs.read_bytes()
    assert b"Quuxplorian" in kept.read_bytes()
    kept.unlink()
    assert _files_holding(tmp_path, ["Quuxplorian", "quuxplorian"]) == []
    assert cli("purge", "--tenant", "other", "--reason", "erasure #7", "--yes") == 0
    assert not theirs.exists() and not list(store.glob("*.exports"))
