"""Session 30 attack: the audit scrubber was a deny-list.

``core/audit.py`` kept every short identifier-shaped string of an entry's details in
clear unless its key was listed in ``CONTENT_KEYS``: a new field carrying a subject's
words (a nickname, a label, a dict keyed by the caller's own names) stayed in the chain,
beyond any purge, until someone remembered to list it. Strings are now kept only under
keys known to hold none (``PLAIN_KEYS``: ids, enum values, digests, the package's own
names); every other string is hashed, and so is a caller's key name inside a hashed dict.
Numbers, booleans and null stay under every key.

Entries are scrubbed once, as they are written, and verified as they were stored: a chain
written under the deny-list (emulated here by a ``PLAIN_KEYS`` that knows every key, which
is exactly the old rule) still verifies after the change, new entries appended to it too.
(Checked as well on a store written by the code before this change, with adds, a
supersession, forget, an ingested round, quota, export, consolidation, reflection,
retention and a purge: it verifies, and the same seeded workload writes the same details
byte for byte but for the purge's randomly keyed reason digests.)

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.core import audit
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")


class _EveryKey(frozenset):  # type: ignore[type-arg]
    """A ``PLAIN_KEYS`` that knows every key: the deny-list as it was."""

    def __contains__(self, item: object) -> bool:
        return True


def test_a_field_nobody_listed_is_hashed_not_kept() -> None:
    word = "".join(("qz", "valdemar", "sen"))
    kept = audit.scrub(
        {
            "nickname": word,  # a field no list names
            "metadata": {word: "x"},  # a dict keyed by the caller's own names
            "namespace": "n1",
            "ids": ["0190-a", "0190-b"],
            "matched": 3,
            "flag": True,
        }
    )
    assert word not in json.dumps(kept)
    assert kept["nickname"].startswith("sha256:")
    assert [k.startswith("sha256:") for k in kept["metadata"]] == [True]
    # what is known to hold no text, and every number or boolean, is kept as it was
    assert kept["namespace"] == "n1" and kept["ids"] == ["0190-a", "0190-b"]
    assert kept["matched"] == 3 and kept["flag"] is True


def test_a_chain_written_under_the_deny_list_still_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    word = "".join(("qz", "ottil", "ie"))
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), context=CTX)
    with monkeypatch.context() as old:
        old.setattr(audit, "PLAIN_KEYS", _EveryKey())
        mem.add("Ann likes green tea", entity="ann")
        mem.auditor.record(CTX, "note", None, {"nickname": word})  # kept in clear then
    mem.add("Ann likes black tea", entity="ann")  # entries of the new rule
    mem.auditor.record(CTX, "note", None, {"nickname": word})
    report = mem.verify_audit_chain()
    assert report.problems == [] and report.entries == 4
    notes = [e.details for e in mem.audit_log(limit=100) if e.action == "note"]
    # an entry is never scrubbed again: the old one keeps what it was written with
    assert [n["nickname"] == word for n in notes] == [True, False]
    mem.close()
