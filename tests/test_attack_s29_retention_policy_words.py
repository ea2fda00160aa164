"""Session 29 attack: a retention policy's words outlived the purge of its tenant.

The audit chain survives a purge and keeps a string verbatim when it looks like an
identifier (``core/audit.py``). Retention entries record the policy that ran: its name in
the run's summary (under ``policy``) and, in each archive or delete entry, the whole policy
as configured, its ``category`` and ``namespace`` verbatim. A tenant's orchestrator who
writes a policy for the subject's rows names them in the subject's words (a category
``diagnosis_hiv``, a policy ``forget_alice_marsh``): after ``purge_user`` reported ``ok``,
those words were still in the store's file, in plain text. The design notes say a retention
entry's policy is hashed; it is now, as every other free text of an entry: the chain still
records that a policy ran, what it matched and applied, and the run still verifies.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.core.audit import digest_text
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role="orchestrator", tenant="other", namespace="n1")


def _word(*parts: str) -> str:
    return "".join(parts)


def _files_holding(folder: Path, word: str) -> list[str]:
    raw = word.lower().encode()
    return sorted(
        str(f.relative_to(folder))
        for f in folder.rglob("*")
        if f.is_file() and raw in f.read_bytes().lower()
    )


def test_a_purge_leaves_no_word_of_the_retention_policies_run_on_the_tenant(
    tmp_path: Path, clock: ManualClock
) -> None:
    category, name = _word("diagnosis", "_", "qzvermal"), _word("forget", "_qzorvik")
    gone = _word("purge", "_qzandel")
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64), clock=clock)
    for i in range(3):
        mem.add(f"finding {i} of the patient", category=category, context=SUBJECT)
    mem.add("the keeper likes green tea", context=OTHER)
    assert _files_holding(tmp_path, category), "the scan must see the category"
    clock.advance(days=40)
    policies = [
        {"name": name, "action": "archive", "older_than": "30d", "category": category,
         "namespace": "n1"},
        {"name": gone, "action": "delete", "older_than": "30d", "category": category},
    ]  # fmt: skip
    report = mem.apply_retention(policies, context=SUBJECT)
    assert [o.applied for o in report.outcomes] == [3, 3], report

    purged = mem.purge_user("subject", "GDPR erasure request #29", context=SUBJECT)

    assert purged.ok, purged.to_dict()
    mem.close()
    for word in (category, name, gone):
        assert _files_holding(tmp_path, word) == [], word


def test_retention_entries_still_say_what_ran_and_the_chain_verifies(
    tmp_path: Path, clock: ManualClock
) -> None:
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64), clock=clock)
    mem.add("an old note", category="scratch", context=SUBJECT)
    clock.advance(days=40)
    policy = {
        "name": "old_scratch",
        "action": "archive",
        "older_than": "30d",
        "category": "scratch",
    }
    mem.apply_retention([policy], context=SUBJECT)

    entries = {e.action: e.details for e in mem.audit_log(context=SUBJECT)}

    run = entries["retention_run"]["policies"][0]
    assert run["policy"] == digest_text("old_scratch")
    assert (run["action"], run["matched"], run["applied"]) == ("archive", 1, 1)
    archived = entries["retention_archive"]
    assert archived["policy"]["category"] == digest_text("scratch")
    assert archived["count"] == 1 and len(archived["ids"]) == 1
    assert mem.verify_audit_chain("subject", context=SUBJECT).ok
    assert mem.purge_user("subject", "erasure", context=SUBJECT).legacy_digest_entries == 0
