"""Attack battery, interrupted erasures: a process killed in the middle of one erasure
must not leave another subject's words where that subject's later ``purge_user`` does not
look. The killed process runs in a subprocess (``os._exit``: no clean-up, as SIGKILL).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from tests.test_attack_erasure_paths import forms

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")

# a process with recall tracing on: both tenants recall (their events in the trace file),
# then the erasure of the OTHER tenant is killed while it replaces the trace file: its
# temporary copy (every event but the other tenant's) is written, the replace never runs
KILLED_TRACE_REWRITE = """
import os, sys

from attestor_arango import AgentContext, AgentRole
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

folder, word = sys.argv[1], sys.argv[2]
orch = AgentRole.ORCHESTRATOR
subject = AgentContext(agent_id="orch", role=orch, tenant="subject", namespace="n1")
other = AgentContext(agent_id="orch", role=orch, tenant="other", namespace="n1")
trace = TraceSettings(enabled=True, path=folder + "/trace.jsonl", include_content=True)
mem = AgentMemory(folder + "/mem.db", config=Config(path=folder + "/mem.db", trace=trace),
                  embedder=HashingEmbedder(64))
mem.add(f"{word} lives in Paris", context=subject)
mem.add("a note of the other tenant", context=other)
mem.recall(f"where does {word} live", context=subject)
mem.recall("the other note", context=other)
# the tenants' files merged into the one file every tenant shared before (the only file an
# erasure rewrites rather than deletes)
tenants = folder + "/trace.jsonl.tenants"
with open(folder + "/trace.jsonl", "wb") as shared:
    for name in sorted(os.listdir(tenants)):
        with open(tenants + "/" + name, "rb") as own:
            shared.write(own.read())
        os.unlink(tenants + "/" + name)

def dying(src, dst):
    os._exit(9)

os.replace = dying
mem.purge_user("other", "GDPR erasure request #31", context=other)
"""


def _memory(folder: Path) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), include_content=True)
    config = Config(path=str(folder / "mem.db"), trace=trace)
    return AgentMemory(folder / "mem.db", config=config, embedder=HashingEmbedder(64))


def _holding(folder: Path, word: str) -> list[str]:
    return sorted(
        f.name
        for f in folder.rglob("*")
        if f.is_file() and any(form.encode() in f.read_bytes().lower() for form in forms(word))
    )


def test_purge_removes_the_trace_copy_a_killed_erasure_of_another_tenant_left(
    tmp_path: Path,
) -> None:
    word = "".join(("vorth", "anglemere"))
    done = subprocess.run(
        [sys.executable, "-c", KILLED_TRACE_REWRITE, str(tmp_path), word],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    left = [f.name for f in tmp_path.glob(".trace.jsonl.erase-*")]
    assert left and any(name in _holding(tmp_path, word) for name in left)  # the premise

    mem = _memory(tmp_path)
    report = mem.purge_user("subject", "GDPR erasure request #32", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert _holding(tmp_path, word) == []
    mem.close()
    assert _holding(tmp_path, word) == []


# the subject written every way the paths battery knows, then a purge killed as it starts one
# collection (the ones before it committed, the rest not): run again by the next process
KILLED_BETWEEN_STEPS = """
import os, sys

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.store.embedded.governance import EmbeddedGovernance
from tests.test_attack_erasure_paths import START, _markers, _memory, _write_every_way
from pathlib import Path

folder, step = Path(sys.argv[1]), sys.argv[2]
subject = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="subject",
                       namespace="n1")
mem = _memory(folder, ManualClock(START), "memory", seed=1)
_write_every_way(mem, _markers(), subject)
purge_collection = EmbeddedGovernance.purge_collection

def dying(self, scope, collection):
    if collection == step:
        os._exit(9)
    return purge_collection(self, scope, collection)

EmbeddedGovernance.purge_collection = dying
mem.purge_user("subject", "GDPR erasure request #33", context=subject)
"""


@pytest.mark.parametrize("step", ["entities", "memories", "episodes"])
def test_a_purge_killed_between_its_steps_and_run_again_leaves_nothing(
    tmp_path: Path, step: str
) -> None:
    from attestor_arango.clock import ManualClock
    from tests.test_attack_erasure_paths import START, _markers, _memory, holders

    done = subprocess.run(
        [sys.executable, "-c", KILLED_BETWEEN_STEPS, str(tmp_path), step],
        capture_output=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    words = _markers()
    assert holders(tmp_path, words)  # the premise: the killed purge left words behind

    clock = ManualClock(START)
    clock.advance(days=1)  # after the killed process's writes
    mem = _memory(tmp_path, clock, "memory", seed=2)
    assert mem.audit_log(limit=1000, context=SUBJECT)[-1].action == "purge_attempted"
    report = mem.purge_user("subject", "GDPR erasure request #33, run again", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert holders(tmp_path, words) == []
    assert mem.list(status="all", limit=1000, context=SUBJECT) == []
    mem.close()
    assert holders(tmp_path, words) == []


# a compaction or retention delete killed after its row delete committed, before the file's
# rewrite: the rows are gone, but bytes of their cells SQLite moved stay on pages in use
KILLED_ROW_DELETE = """
import os, sys

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.store.embedded.governance import EmbeddedGovernance
from tests.test_attack_erasure_interrupted import POLICY
from tests.test_attack_erasure_paths import START, _memory
from pathlib import Path

folder, word, how = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
orch = AgentRole.ORCHESTRATOR
ctx = AgentContext(agent_id="orch", role=orch, tenant="subject", namespace="n1")
scratch = AgentContext(agent_id="orch", role=orch, tenant="subject", namespace="scratch")
clock = ManualClock(START)
mem = _memory(folder, clock, "memory", seed=1)
ids = []
for i in range(300):
    ids.append(mem.add(f"fact {i} about {word}", context=scratch).id)
    mem.add(f"note {i}", context=ctx)
if how == "compact":
    for memory_id in ids:
        mem.forget(memory_id, reason="asked", context=scratch)
clock.advance(days=40)
EmbeddedGovernance.flush_erasure = lambda self, *a, **k: os._exit(9)
if how == "compact":
    mem.compact(older_than="1d", context=ctx)
else:
    mem.apply_retention(POLICY, context=ctx)
"""
POLICY = [{"name": "s", "action": "delete", "namespace": "scratch", "older_than": "30d"}]


@pytest.mark.parametrize("how", ["compact", "retention delete"])
def test_a_row_delete_killed_before_the_rewrite_is_finished_by_the_next_run(
    tmp_path: Path, how: str
) -> None:
    """Run again, the compaction (retention delete) finds no row to remove (they went before
    the kill), and must still finish what the killed one left: the file's rewrite and its
    outcome entry (without which every later open settles the tenant again)."""
    from attestor_arango.clock import ManualClock
    from tests.test_attack_erasure_paths import START, _memory

    word = "".join(("trunch", "villequ"))
    done = subprocess.run(
        [sys.executable, "-c", KILLED_ROW_DELETE, str(tmp_path), word, how],
        capture_output=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 9, done.stderr.decode()[-2000:]
    action = "compact" if how == "compact" else "retention_delete"
    clock = ManualClock(START)
    clock.advance(days=41)
    mem = _memory(tmp_path, clock, "memory", seed=2)
    assert mem.audit_log(limit=2000, context=SUBJECT)[-1].action == f"{action}_attempted"
    assert _holding(tmp_path, word)  # the premise: bytes of the removed rows left

    if how == "compact":
        assert mem.compact(older_than="1d", context=SUBJECT)["removed"] == 0
    else:
        assert mem.apply_retention(POLICY, context=SUBJECT).outcomes[0].applied == 0

    assert _holding(tmp_path, word) == []
    trail = [e.action for e in mem.audit_log(limit=2000, context=SUBJECT)]
    assert [a for a in trail if a.startswith(action)][-2:] == [f"{action}_attempted", action]
    assert mem.store.governance.settle_interrupted() == []  # type: ignore[attr-defined]
    assert len(mem.list(limit=1000, context=SUBJECT)) == 300
    mem.close()
    assert _holding(tmp_path, word) == []
