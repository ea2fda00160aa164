"""Erasure after crashes: what a killed process left beside the store goes with the purge.

A process killed while it wrote a tenant's index file leaves a temporary file
(indexfile.write_temp) holding that tenant's texts or vectors; nothing reads it, and
only the next save of *some* index clears the files of dead writers. A purge of the
tenant must not report success while such a file still holds the subject's words,
and it must leave every other tenant's files as they were.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")

# a writer that stores the subject's rows, then dies (SIGKILL-like, no clean-up) while
# it writes the subject's text index file, just after a section holding the word
KILLED_WRITER = """
import os, sys
import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import indexfile

path, word = sys.argv[1], sys.argv[2]
ctx = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="subject", namespace="n1")
other = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="other", namespace="n1")
mem = AgentMemory(path, embedder=HashingEmbedder(64))
for i in range(5):
    mem.add(f"the other tenant's note {i}", context=other)
mem.recall("other note", context=other)  # the other tenant's index files written
for i in range(20):
    mem.add(f"{word} lives in Paris, note {i}", context=ctx)
written = indexfile.write_section

def dying(f, a):
    written(f, a)
    if word.encode() in a.tobytes().lower():
        f.flush()
        os._exit(9)

indexfile.write_section = dying
mem.recall(f"where does {word} live", context=ctx)  # builds and saves the text index
"""


def _memory(path: Path) -> AgentMemory:
    """On the system clock, as the writer was: its rows are not in this process's future."""
    return AgentMemory(path, embedder=HashingEmbedder(64))


def _holding(folder: Path, word: str) -> list[str]:
    raw = word.lower().encode()
    return sorted(
        f.name for f in folder.rglob("*") if f.is_file() and raw in f.read_bytes().lower()
    )


def _other_files(folder: Path, subject_names: set[str]) -> dict[str, bytes]:
    idx = folder / "mem.db.idx"
    return {
        f.name: f.read_bytes()
        for f in sorted(idx.iterdir())
        if f.is_file() and f.name.split(".")[0] not in subject_names
    }


def test_purge_removes_the_index_file_a_killed_writer_left_half_written(tmp_path: Path) -> None:
    word = "".join(("zorv", "ellink"))  # made at run time: no constant of this module holds it
    db = tmp_path / "mem.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(db), word], capture_output=True, timeout=120
    )
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    temps = [f.name for f in (tmp_path / "mem.db.idx").glob("*.tmp.*")]
    assert temps and any(".text.tmp." in t for t in temps), temps  # the premise

    mem = _memory(db)  # the next process: reads the other tenant, then the purge
    assert mem.recall("other note", context=OTHER).results
    subject_files = {f.name.split(".")[0] for f in (tmp_path / "mem.db.idx").glob("*.tmp.*")}
    others_before = _other_files(tmp_path, subject_files)
    assert others_before  # the other tenant has files to compare
    assert any(".tmp." in name for name in _holding(tmp_path, word))

    report = mem.purge_user("subject", "GDPR erasure request #11", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert _holding(tmp_path, word) == []
    assert _other_files(tmp_path, subject_files) == others_before
    mem.close()
    assert _holding(tmp_path, word) == []


# a process that erases the subject and is killed after the last row went, before it
# emptied the write-ahead log (and so before the outcome entry was written)
KILLED_ERASER = """
import os, sys
import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded.governance import EmbeddedGovernance

path, word = sys.argv[1], sys.argv[2]
orch = AgentRole.ORCHESTRATOR
ctx = AgentContext(agent_id="orch", role=orch, tenant="subject", namespace="n1")
other = AgentContext(agent_id="orch", role=orch, tenant="other", namespace="n1")
mem = AgentMemory(path, embedder=HashingEmbedder(64))
for i in range(20):
    mem.add(f"{word} lives in Paris, note {i}", context=ctx)
    mem.add(f"the other tenant's note {i}", context=other)
mem.ingest_round({"user": f"I am {word}", "assistant": "Noted."}, context=ctx)
mem.recall(f"where does {word} live", context=ctx)
mem.recall("other note", context=other)
EmbeddedGovernance.flush_erasure = lambda self, *a, **k: os._exit(9)
mem.purge_user("subject", "GDPR erasure request #12", context=ctx)
"""


def test_a_purge_killed_before_it_emptied_the_log_leaves_nothing_once_the_store_is_opened(
    tmp_path: Path,
) -> None:
    """Every row of the subject was deleted, but the old page images (the rows as they were
    written) stay in the WAL and the file until a checkpoint, and a server opened after the
    crash checkpoints only every 10,000 pages or at close: the open finds the chain of the
    subject ending in the attempt entry and empties the log then."""
    word = "".join(("quib", "blethorpe"))
    db = tmp_path / "mem.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_ERASER, str(db), word], capture_output=True, timeout=120
    )
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    assert _holding(tmp_path, word)  # the premise: the killed process left the words

    mem = _memory(db)  # the next process, kept open (a server)
    assert mem.recall("other note", context=OTHER).results
    mem.add("the other tenant writes on", context=OTHER)
    assert _holding(tmp_path, word) == []
    assert mem.audit_log(limit=1000, context=SUBJECT)[-1].action == "purge_attempted"
    assert mem.store.governance.settle_interrupted() == ["subject"]  # type: ignore[attr-defined]
    again = mem.purge_user("subject", "GDPR erasure request #12, run again", context=SUBJECT)
    assert again.ok, again.to_dict()
    assert mem.store.governance.settle_interrupted() == []  # type: ignore[attr-defined]
    assert len(mem.list(limit=100, context=OTHER)) == 21
    mem.close()
    assert _holding(tmp_path, word) == []


def _deleted_mappings(folder: Path) -> list[str]:
    """Files of ``folder`` this process still maps though they were deleted (Linux)."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return []
    lines = maps.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if str(folder) in line and line.endswith("(deleted)")]


def test_a_second_store_on_the_file_forgets_the_purged_tenant_at_its_next_read(
    tmp_path: Path,
) -> None:
    """Store B (another connection: another process, a second server) read the subject
    and holds its indexes, mapped from their files, and its decoded rows. Store A purges.
    B's next call, whatever its tenant, drops all of it: no recall, get, search, listing
    or explanation of B returns the subject, B maps no deleted file, and B's close writes
    no index of the subject back."""
    from attestor_arango.errors import NotFoundError

    word = "".join(("flen", "derwick"))
    db = tmp_path / "mem.db"
    writer = _memory(db)
    ids = [writer.add(f"{word} lives in Paris, note {i}", context=SUBJECT).id for i in range(12)]
    for i in range(12):
        writer.add(f"the other tenant's note {i}", context=OTHER)
    writer.close()  # the index files written
    a, b = _memory(db), _memory(db)
    # B stands for another process: a store of this process on the file would be told to
    # drop its caches by the purge itself (tests/test_attack_s29_second_store_in_process.py)
    from attestor_arango.store.embedded import store as embedded_store

    embedded_store._OPEN.pop(id(b.store))
    for mem in (a, b):
        assert mem.recall(f"where does {word} live", context=SUBJECT).results
        assert mem.get(ids[0], context=SUBJECT).content.startswith(word)
    assert b.store.cached_tenants() == ["subject"]  # type: ignore[attr-defined]

    assert a.purge_user("subject", "GDPR erasure request #13", context=SUBJECT).ok
    assert _deleted_mappings(tmp_path)  # B still maps the files A deleted, until it reads

    assert b.recall("other note", context=OTHER).results  # a read of another tenant
    assert _deleted_mappings(tmp_path) == []
    assert b.recall(f"where does {word} live", context=SUBJECT).results == ()
    assert b.explain_recall(f"{word} Paris", context=SUBJECT).response.results == ()
    assert b.search(word, context=SUBJECT) == []
    assert b.list(status="all", context=SUBJECT) == []
    with pytest.raises(NotFoundError):
        b.get(ids[0], context=SUBJECT)
    b.close()
    a.close()
    assert _holding(tmp_path, word) == []
