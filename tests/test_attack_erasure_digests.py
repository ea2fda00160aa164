"""Attack battery: after a purge, no digest left anywhere lets anyone confirm a guess of what
was erased (a dictionary attack: hash "Alice has cancer", look for the hash).

The audit chain outlives a purge (it is the record that the erasure happened), and so do
an export a subject was given and any copy a second tenant imported. Whatever they keep of
an erased memory must not be recomputable from a guessed text without a secret the purge
erased too: each memory's digests (its row digest, its metadata's, the signed message, an
ingest decision's fact, a forget reason) are keyed by a random per-row salt stored on the
row only (``models.content_digest``), and the purge erases the salt with the row.

The attacker here knows everything about each erased row except its salt (the words, the
id, the times, the agent: every field ``row_digest`` covers), computes every digest the
package makes without a salt (plain SHA-256 of the words as ``content_hash``, ``sha256:``
text digests, the row and metadata digests as the chain recorded them before salts), and
looks for them, the row's signature and its salt in every file under the store's folder
and in every answer a reader gets after the purge (audit listing and pages, the deletion
trail, the export, the chain's verification). While the row lives, the same digests verify
it: a tampered row is caught, and an export carries the salt so its import verifies.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from forged_chain import rechained

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, SigningSettings, TraceSettings
from attestor_arango.core.audit import digest_text, extra_digest, row_digest
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Episode, Memory, content_hash
from attestor_arango.scope import Scope

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")


def _memory(folder: Path, clock: ManualClock, seed: int, db: str = "mem.db") -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), include_content=True)
    config = Config(
        path=str(folder / db),
        trace=trace,
        signing=SigningSettings(enabled=True),  # its key generated in the folder
    )
    return AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(seed)
    )


def _secret(n: int) -> str:
    """A short text of the kind a dictionary attack guesses, built at run time."""
    return f"{'Alice Marsh'} has {'condition'}-{n}"


def _write(mem: AgentMemory) -> list[str]:
    """The subject's words in by every way that leaves a digest: an add with metadata, an
    update, a forget with a reason quoting the fact, an ingested round; returns the texts."""
    texts = [_secret(1), _secret(2), f"forgotten because {_secret(1)}"]
    first = mem.add(
        texts[0], entity="alice", category="health", metadata={"note": texts[0]}, context=SUBJECT
    )
    second = mem.update(first.id, content=texts[1], context=SUBJECT)
    mem.forget(second.id, reason=texts[2], context=SUBJECT)
    said = "I live in Zurich and I work at Initech."
    session = SUBJECT.with_session("alice-marsh-chat")  # a session id that names the person
    result = mem.ingest_round({"user": said, "assistant": "Noted."}, context=session)
    texts += [m.content for m in result.memories]
    # the same words again: the round's decision is a NOOP keyed by the existing row
    again = "I live in Zurich."
    mem.ingest_round({"user": again, "assistant": "Still noted."}, context=SUBJECT)
    texts += [said, again, "alice", "health", "Zurich", "Initech", "alice-marsh-chat"]
    mem.recall("where does Alice live", context=SUBJECT)
    mem.add("Bob likes tea", context=OTHER)
    return texts


def _rows(mem: AgentMemory, ctx: AgentContext) -> list[Memory]:
    return mem.list(status="all", limit=1000, context=ctx)


def _guesses(
    rows: list[Memory],
    texts: list[str],
    episodes: list[Episode] = (),  # type: ignore[assignment]
) -> dict[str, str]:
    """What an attacker who guessed every word right, and knows every field of each erased
    row but its salt, can compute or must never find: the digest -> what it would confirm."""
    out: dict[str, str] = {}
    for text in texts:
        out[content_hash(text)] = f"sha256 of {text!r}"
        out[digest_text(text)] = f"sha256: digest of {text!r}"
    for m in rows:
        unsalted = m.model_copy(update={"salt": None})
        out[row_digest(unsalted)] = f"row digest of {m.id} without a salt"
        out[extra_digest(unsalted)] = f"metadata digest of {m.id} without a salt"
        assert m.salt is not None and m.signature is not None  # the premise: salted, signed
        out[m.salt] = f"salt of {m.id}"
        out[m.signature] = f"signature of {m.id} (checks a guess with the public key)"
    for e in episodes:
        assert e.salt is not None
        out[e.salt] = f"salt of episode {e.id}"
    return out


def _found(folder: Path, answers: dict[str, str], guesses: dict[str, str]) -> list[str]:
    """Every guess found in a file under ``folder`` or in an answer."""
    found = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = f.read_bytes()
        found += [f"{why} in {f.name}" for g, why in guesses.items() if g.encode() in blob]
    for name, text in answers.items():
        found += [f"{why} in {name}" for g, why in guesses.items() if g in text]
    return sorted(found)


def _answers(mem: AgentMemory, ctx: AgentContext) -> dict[str, str]:
    """What any reader of the tenant gets after the purge, as text."""
    mon = ctx.as_agent("mon", AgentRole.MONITOR)
    page = mem.audit_page(limit=500, context=ctx)

    def dump(value: Any) -> str:
        def plain(v: Any) -> Any:
            return v.to_dict() if hasattr(v, "to_dict") else v.model_dump(mode="json")

        return json.dumps(value, default=plain)

    return {
        "audit listing": dump(mem.audit_log(limit=1000, context=ctx)),
        "audit page": dump(page.entries) + repr(page.problems),
        "deletion trail": dump(mem.deletion_audit_log(limit=100, context=mon)),
        "export": dump(mem.export_user(ctx.tenant, context=ctx)),
        "verification": dump(mem.verify_audit_chain(context=ctx)),
    }


def test_purge_leaves_no_digest_a_guessed_text_confirms(tmp_path: Path, clock: ManualClock) -> None:
    mem = _memory(tmp_path, clock, seed=1)
    texts = _write(mem)
    rows = _rows(mem, SUBJECT)
    episodes = mem.store.list_episodes(Scope("subject"), limit=100)
    guesses = _guesses(rows, texts, episodes)
    assert len(rows) >= 4 and len(episodes) == 2
    # the premise: the guesses are checkable while the rows live (their salts, signatures,
    # plain content hashes are on disk), and the chain verifies the rows with them
    assert _found(tmp_path, {}, guesses)
    assert mem.verify_audit_chain(context=SUBJECT).ok
    assert mem.verify_all(context=SUBJECT)["ok"]

    report = mem.purge_user("subject", "GDPR erasure request #31", context=SUBJECT)

    assert report.ok, report.to_dict()
    answers = _answers(mem, SUBJECT)
    assert _found(tmp_path, answers, guesses) == []
    assert mem.verify_audit_chain(context=SUBJECT).ok  # the record of what existed still holds
    mem.close()
    assert _found(tmp_path, {}, guesses) == []
    clock.advance(seconds=60)  # the reopened memory's clock: after every row written
    mem = _memory(tmp_path, clock, seed=2)
    assert _found(tmp_path, _answers(mem, SUBJECT), guesses) == []
    assert mem.verify_audit_chain(context=SUBJECT).ok
    assert [m.content for m in _rows(mem, OTHER)] == ["Bob likes tea"]
    mem.close()


def _tamper(mem: AgentMemory, sql: str, *args: object) -> None:
    conn = sqlite3.connect(str(mem.store.path))  # type: ignore[attr-defined]
    try:
        conn.execute(sql, args)
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("UPDATE memories SET salt = ? WHERE id = ?", "ab" * 32),  # another salt
        ("UPDATE memories SET salt = ? WHERE id = ?", None),  # stripped: looks written before
        ("UPDATE memories SET content = ?, content_hash = ? WHERE id = ?", "x"),  # new words
    ],
    ids=["other_salt", "salt_stripped", "content_and_hash"],
)
def test_a_live_row_tampered_with_is_caught_by_its_keyed_digests(
    tmp_path: Path, clock: ManualClock, sql: str, value: str | None
) -> None:
    mem = _memory(tmp_path, clock, seed=3)
    row = mem.add(_secret(3), entity="alice", category="health", context=SUBJECT)
    mem.add("Alice likes tea", context=SUBJECT)
    assert row.salt is not None and mem.verify_audit_chain(context=SUBJECT).ok
    args = (value, row.id) if "salt" in sql else (value, content_hash(str(value)), row.id)

    _tamper(mem, sql, *args)

    mem.close()
    clock.advance(seconds=60)
    mem = _memory(tmp_path, clock, seed=4)
    problems = mem.verify_audit_chain(context=SUBJECT).problems
    assert [(p.kind, row.id in p.message) for p in problems] == [("row_modified", True)]
    assert mem.verify_memory(row.id, context=SUBJECT) is False
    mem.close()


def test_an_export_carries_the_salts_so_its_import_verifies(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = _memory(tmp_path, clock, seed=5)
    _write(mem)
    dump = json.loads(json.dumps(mem.export_user("subject", context=SUBJECT)))
    assert all(m["salt"] for m in dump["memories"])  # every row's key travels with it
    report = mem.purge_user("subject", "restore test", context=SUBJECT)
    assert report.ok, report.to_dict()

    mem.import_user(dump, context=SUBJECT)  # the same tenant: ids and signatures kept
    copy = AgentContext(agent_id="orch", role=ORCH, tenant="copy", namespace="n1")
    mem.import_user(dump, context=copy)  # another tenant: re-keyed, unsigned copies

    assert mem.verify_audit_chain(context=SUBJECT).ok
    assert mem.verify_audit_chain(context=copy).ok
    signed = mem.verify_all(context=SUBJECT)
    assert signed["ok"] and signed["valid"] == len(dump["memories"]), signed
    restored = {m.id: m for m in _rows(mem, SUBJECT)}
    assert {m["id"]: m["salt"] for m in dump["memories"]} == {
        i: m.salt for i, m in restored.items()
    }
    # without its salt a restored row is not the row that was signed
    stripped = json.loads(json.dumps(dump))
    for m in stripped["memories"]:
        m["salt"] = None
    assert mem.purge_user("subject", "restore test 2", context=SUBJECT).ok
    with pytest.raises(ValidationError, match="does not match its own audit chain"):
        mem.import_user(stripped, context=SUBJECT)  # its rows no longer match its chain
    mem.import_user(rechained(stripped), context=SUBJECT)  # its chain made to agree: the
    # signatures still tell
    assert mem.verify_all(context=SUBJECT)["valid"] == 0
    mem.close()


def test_compaction_leaves_no_digest_of_the_rows_it_removed(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Erasure inside a living tenant: a forgotten row removed by ``compact`` takes its salt
    along, so the chain's entries of it (its write, and the forget reason quoting it) can no
    longer confirm a guess, while the tenant's other rows still verify."""
    mem = _memory(tmp_path, clock, seed=6)
    text, reason = _secret(6), f"the subject asked: {_secret(6)}"
    gone = mem.add(text, metadata={"note": text}, context=SUBJECT)
    kept = mem.add("Alice likes tea", context=SUBJECT)
    mem.forget(gone.id, reason=reason, context=SUBJECT)
    guesses = _guesses([gone], [text, reason])
    assert _found(tmp_path, {}, guesses)  # the premise: checkable while the row lives
    clock.advance(days=2)

    done = mem.compact(older_than="1d", context=SUBJECT)

    assert done["removed"] == 1, done
    assert _found(tmp_path, _answers(mem, SUBJECT), guesses) == []
    assert mem.verify_audit_chain(context=SUBJECT).ok
    assert [m.id for m in _rows(mem, SUBJECT)] == [kept.id]
    mem.close()


def test_no_rest_answer_after_a_purge_holds_a_digest_a_guess_confirms(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The same erasure through the REST service, read back the way a client of the service
    reads it: the audit listing, page and deletion trail, the export, both verifications."""
    from starlette.testclient import TestClient

    from attestor_arango.interfaces.api.app import create_app
    from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key

    mem = _memory(tmp_path, clock, seed=7)
    texts = _write(mem)
    guesses = _guesses(_rows(mem, SUBJECT), texts)
    key = ApiKey(id="k", sha256=hash_key("sk"), tenant="subject", roles=("orchestrator",),
                 agent_ids=("orch",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    auth = {"Authorization": "Bearer sk", "X-Agent-Id": "orch", "X-Namespace": "n1"}
    purge = {"user": "subject", "reason": "GDPR erasure request #32"}
    assert client.post("/v1/governance/purge", json=purge, headers=auth).json()["ok"]

    calls = [
        ("GET", "/v1/audit?limit=1000", None),
        ("GET", "/v1/audit/page?limit=500", None),
        ("GET", "/v1/audit/deletions?limit=100", None),
        ("POST", "/v1/audit/verify", {"user": "subject"}),
        ("POST", "/v1/governance/export", {"user": "subject"}),
        ("GET", "/v1/verify", None),
    ]
    answers = {}
    for method, path, body in calls:
        answer = client.request(method, path, json=body, headers=auth)
        assert answer.status_code == 200, (path, answer.text)
        answers[path] = answer.text
    assert json.loads(answers["/v1/audit/verify"])["ok"] is True
    assert '"add"' in answers["/v1/audit?limit=1000"]  # the premise: the writes are listed
    assert _found(tmp_path, answers, guesses) == []
    mem.close()
