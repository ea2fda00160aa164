"""Session 29 attack: a second AgentMemory in the same process kept the purged subject.

Two AgentMemory objects on one store file in one process (a REST app and an MCP server
started side by side, a web app opening one per worker): both had read the subject, so
each held its text and vector indexes, decoded rows and entity names in memory. ``purge``
through one reported ``ok``, yet the other still held every word, in this very process,
until its next call happened to check the file for other connections' commits; an idle
one held them for as long as it stayed open. The erasure now tells every other store open
on the same file in the process to drop what it holds, as that next call would; a store
on another file keeps its caches.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from tests.test_erasure_residue import reachable_holders

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role="orchestrator", tenant="other", namespace="n1")


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(path, embedder=HashingEmbedder(64))


def _load(mem: AgentMemory, word: str) -> None:
    """Reads that fill every cache of the subject: indexes, rows, entities."""
    assert mem.recall(f"where does {word} live", context=SUBJECT).results
    assert mem.search(word, context=SUBJECT)
    assert mem.list(context=SUBJECT)


def test_a_purge_empties_every_store_of_the_process_on_the_same_file(tmp_path: Path) -> None:
    word = "".join(("qz", "wendel", "mark"))
    a, b = _memory(tmp_path / "mem.db"), _memory(tmp_path / "mem.db")
    elsewhere = _memory(tmp_path / "other.db")  # another file: its caches are its own
    for mem in (a, elsewhere):
        mem.add(f"{word.capitalize()} lives in Paris", entity=word, context=SUBJECT)
        mem.add("the keeper likes green tea", context=OTHER)
    for mem in (a, b, elsewhere):
        _load(mem, word)
    assert b.store.cached_tenants() == ["subject"]  # type: ignore[attr-defined]

    assert a.purge_user("subject", "GDPR erasure request #29", context=SUBJECT).ok

    assert b.store.cached_tenants() == []  # type: ignore[attr-defined]
    elsewhere.purge_user("subject", "GDPR erasure request #29", context=SUBJECT)
    assert reachable_holders(word) == []
    assert b.recall(f"where does {word} live", context=SUBJECT).results == ()
    assert b.recall("keeper tea", context=OTHER).results
    for mem in (a, b, elsewhere):
        mem.close()


def test_a_store_on_another_file_keeps_its_caches(tmp_path: Path) -> None:
    word = "".join(("qz", "tarvel", "ing"))
    a, elsewhere = _memory(tmp_path / "mem.db"), _memory(tmp_path / "other.db")
    for mem in (a, elsewhere):
        mem.add(f"{word} lives in Paris", context=SUBJECT)
        _load(mem, word)

    assert a.purge_user("subject", "GDPR erasure request #29", context=SUBJECT).ok

    assert elsewhere.store.cached_tenants() == ["subject"]  # type: ignore[attr-defined]
    a.close()
    elsewhere.close()


def test_a_purge_after_the_other_store_closed_is_unaffected(tmp_path: Path) -> None:
    word = "".join(("qz", "polder", "ain"))
    a, b = _memory(tmp_path / "mem.db"), _memory(tmp_path / "mem.db")
    a.add(f"{word} lives in Paris", context=SUBJECT)
    _load(b, word)
    b.close()

    assert a.purge_user("subject", "GDPR erasure request #29", context=SUBJECT).ok
    a.close()
