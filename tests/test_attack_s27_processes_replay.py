"""Session 27 attack: an ``as_of`` read in one process while another process commits late.

A write takes its transaction time inside its write transaction and commits at the end.
In one process a read waits for that transaction (one connection, one lock), but another
process on the same store file read past it: a read ``as_of`` a time after the write's
transaction time, taken while the write was still open, left the row out, and the same read
repeated after the commit held it. The answer to "what did the memory hold at T" changed
after T. Now a read of a time later than what its store knows settled first waits for every
write transaction open on the file (``SQLiteStore.settle``), so the first answer is the
exact one and every re-read gives the same bytes.

The two processes are ordered by files, not sleeps: the writer opens its transaction, writes
and says so, then commits once the reader has answered (the old behaviour) or has reached
the point where it waits for the writer (``settle``, announced by the reader's script).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMON = """
import json, sys, time
from pathlib import Path
from attestor_arango import AgentContext
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n")
folder = Path(sys.argv[1])
mem = AgentMemory(config=Config(path=str(folder / "mem.db")), embedder=HashingEmbedder(64))

def wait_for(*names):
    while not any((folder / n).exists() for n in names):
        time.sleep(0.005)  # a poll for the other process's file, not a timing assumption

def signal(name, text=""):
    (folder / (name + ".tmp")).write_text(text)
    (folder / (name + ".tmp")).rename(folder / name)
"""

WRITER = """
wait_for("ready")  # the reader has opened the store (an open may take the write lock)
with mem.store.transaction():  # a long write transaction: committed when the reader says
    row = mem.add("Quillerbrand moved to Lisbon", entity="quill", context=CTX)
    signal("written", json.dumps({"t_created": row.t_created.isoformat()}))
    wait_for("answered", "waiting")
mem.close()
signal("committed")
"""

READER = """
from datetime import datetime
from attestor_arango.clock import iso, to_us
store = mem.store
settle = getattr(type(store), "settle", None)
if settle is not None:  # the point where a read waits for the other process's writer
    def announced(self, *args, **kwargs):
        signal("waiting")
        return settle(self, *args, **kwargs)
    type(store).settle = announced
mode = sys.argv[2]
if mode == "first":
    mem.recall("Quillerbrand Lisbon", context=CTX)  # loads (and saves) the indexes first
    signal("ready")
    wait_for("written")
    written = datetime.fromisoformat(json.loads((folder / "written").read_text())["t_created"])
    after = mem.runtime.clock.now_us()  # a tick later than the write's transaction time
    times = {"before": iso(to_us(written) - 1), "after": iso(after)}
else:
    times = json.loads((folder / "times").read_text())

def answers():
    out = {}
    for name, at in sorted(times.items()):
        recalled = mem.recall("Quillerbrand Lisbon", as_of=at, context=CTX)  # first: caches
        rows = mem.list(as_of=at, context=CTX)
        hits = mem.search("Lisbon", as_of=at, context=CTX)
        out[name] = {
            "list": [m.model_dump(mode="json") for m in rows],
            "search": [m.model_dump(mode="json") for m in hits],
            "recall": [r.model_dump(mode="json") for r in recalled.results],
        }
    return out

result = answers()
if mode == "first":
    (folder / "times").write_text(json.dumps(times))
(folder / ("answer-" + mode)).write_text(json.dumps(result, sort_keys=True))
signal("answered")
mem.close()
"""


def _start(folder: Path, body: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env.update(PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(folder / "xdg"))
    script = textwrap.dedent(COMMON) + textwrap.dedent(body)
    cmd = [sys.executable, "-c", script, str(folder), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _done(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err


def test_an_as_of_read_beside_another_processes_late_commit_is_exact_and_stable(
    tmp_path: Path,
) -> None:
    seed = _start(tmp_path, "mem.add('Quillerbrand lived in Porto', entity='quill', context=CTX)")
    _done(seed)
    writer = _start(tmp_path, WRITER)
    reader = _start(tmp_path, READER, "first")
    _done(reader)
    _done(writer)
    assert (tmp_path / "committed").exists()
    again = _start(tmp_path, READER, "again")  # after the commit, in a new process
    _done(again)
    first = json.loads((tmp_path / "answer-first").read_text())
    second = json.loads((tmp_path / "answer-again").read_text())

    def contents(name: str, how: str) -> list[str]:
        rows = first[name][how]
        return sorted(r["memory"]["content"] if how == "recall" else r["content"] for r in rows)

    late = "Quillerbrand moved to Lisbon"
    assert late not in contents("before", "list")
    assert late in contents("after", "list"), "the read after the write's time missed it"
    assert late in contents("after", "search")
    assert late in contents("after", "recall")
    assert first == second  # the same bytes when read again after the commit
