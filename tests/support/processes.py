"""Several processes on one embedded store: a worker process driven line by line.

``Worker(path)`` starts ``python -c WORKER`` on the store at ``path`` (an ``AgentMemory``
with a hashing embedder and a manual clock); each ``call`` sends one JSON command and
waits for its one-line JSON answer, so a test interleaves two processes' steps exactly.
Every wait is bounded (a hang guard, never a timed assertion).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

WAIT_S = 120.0  # hang guard for one answer

WORKER = textwrap.dedent(
    """
    import json, sys, threading
    from attestor_arango import AgentContext
    from attestor_arango.clock import ManualClock
    from attestor_arango.config import Config
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.memory import AgentMemory
    from attestor_arango.scope import TemporalView
    from attestor_arango.store.embedded import indexfile

    DAY_US = 86_400 * 10**6
    clock = ManualClock()
    mem = AgentMemory(config=Config(path=sys.argv[1]), embedder=HashingEmbedder(64), clock=clock)
    gate = {"stall": None, "sections": None}
    real_write_temp, real_write_section = indexfile.write_temp, indexfile.write_section

    def stalled_write_temp(path, *args, **kwargs):
        # told to: say so, wait for a line on stdin, then write the file and wait to be killed
        if gate["stall"] is not None and gate["stall"] in path.name:
            print(json.dumps({"stalled": path.name}), flush=True)
            sys.stdin.readline()
            try:
                written = real_write_temp(path, *args, **kwargs).name
            except Exception as exc:  # it refused to write the file
                written = type(exc).__name__
            print(json.dumps({"written": written}), flush=True)
            threading.Event().wait()
        return real_write_temp(path, *args, **kwargs)

    def stalled_write_section(f, a):
        # told to: after that many sections, say so and wait to be killed mid-file
        real_write_section(f, a)
        if gate["sections"] is not None:
            gate["sections"] -= 1
            if gate["sections"] == 0:
                f.flush()
                print(json.dumps({"writing": f.name}), flush=True)
                threading.Event().wait()

    indexfile.write_temp, indexfile.write_section = stalled_write_temp, stalled_write_section

    def ctx(tenant):
        return AgentContext(agent_id="orch", role="orchestrator", tenant=tenant, namespace="n")

    def run(cmd, *args):
        if cmd == "add":
            return mem.add(args[1], context=ctx(args[0])).id
        if cmd == "adds":
            return [mem.add(t, context=ctx(args[0])).id for t in args[1]]
        if cmd == "recall":
            clock.advance(seconds=1)  # past another process's ticks (each write moves its own)
            found = mem.recall(args[1], context=ctx(args[0]))
            return [r.memory.content for r in found]
        if cmd == "texts":  # the text lane alone, every row it holds for the words
            store, scope = mem.store, mem.runtime.scope(ctx(args[0]))
            view = TemporalView(as_of=clock.now_us() + DAY_US)  # past every tick of today
            hits = store.text_pool(scope, args[1], 10_000, view)
            return sorted(h.content for h in hits)
        if cmd == "pool":  # the text lane's pool in its order, with ids and scores
            store, scope = mem.store, mem.runtime.scope(ctx(args[0]))
            view = TemporalView(as_of=clock.now_us() + DAY_US)
            return [[h.id, h.content, h.score] for h in store.text_pool(scope, args[1], 50, view)]
        if cmd == "nearest":  # the vector lane's candidates for a query's embedding
            store, scope = mem.store, mem.runtime.scope(ctx(args[0]))
            view = TemporalView(as_of=clock.now_us() + DAY_US)
            vector = mem.embedder.embed([args[1]])[0]
            hits = store.vector_candidates(scope, vector, 20, view)
            return [[h.memory.id, h.score] for h in hits]
        if cmd == "churn":  # adds, each with its own word, reading the tenant every few
            tenant, prefix, n, every = args
            ids = []
            for i in range(n):
                ids.append(mem.add(f"{prefix}w{i} rows together {i % 7}", context=ctx(tenant)).id)
                if i % every == every - 1:
                    mem.recall(f"together {prefix}w{i}", context=ctx(tenant))
            return ids
        if cmd == "find_each":  # per word, the contents the text lane finds for it alone
            store, scope = mem.store, mem.runtime.scope(ctx(args[0]))
            view = TemporalView(as_of=clock.now_us() + DAY_US)
            return {w: [h.content for h in store.text_pool(scope, w, 5, view)] for w in args[1]}
        if cmd == "get":
            return mem.get(args[1], context=ctx(args[0])).content
        if cmd == "list":
            return sorted(m.content for m in mem.list(limit=1000, context=ctx(args[0])))
        if cmd == "purge":
            return mem.purge_user(args[0], "erasure request", context=ctx(args[0])).ok
        if cmd == "forget":
            return mem.forget(args[1], reason="gone", context=ctx(args[0])).id
        if cmd == "compact":
            return mem.compact(older_than=args[1], context=ctx(args[0]))["removed"]
        if cmd == "retention":  # a delete policy over the tenant's rows older than args[1]
            policy = [{"name": "drop-old", "action": "delete", "older_than": args[1]}]
            return mem.apply_retention(policy, context=ctx(args[0])).ok
        if cmd == "advance":
            clock.advance(days=args[0])
            return None
        if cmd == "residue":
            return mem.store.tenant_residue(mem.runtime.scope(ctx(args[0])))
        if cmd == "stall_save":
            gate["stall"] = args[0]
            return None
        if cmd == "resave_rows":  # files rewritten after this many rows (not 1000)
            from attestor_arango.store.embedded import persisted
            persisted._RESAVE_ROWS, persisted._RESAVE_SHARE = args[0], 0.0
            return None
        if cmd == "stall_commit":  # killed right after a COMMIT that drops a tenant's rows
            from attestor_arango.store.embedded.caches import TenantCaches
            real_committed = TenantCaches.committed

            def stalled_committed(self, ops, prepared):
                if any(op == "drop" for op, _ in ops):
                    print(json.dumps({"committed": True}), flush=True)
                    threading.Event().wait()
                return real_committed(self, ops, prepared)

            TenantCaches.committed = stalled_committed
            return None
        if cmd == "stall_sections":
            gate["sections"] = args[0]
            return None
        if cmd == "close":
            mem.close()
            return None
        raise ValueError(cmd)

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd, *args = json.loads(line)
        try:
            answer = {"ok": run(cmd, *args)}
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)
        if cmd == "close":
            break
    """
)


class Worker:
    """One process holding an ``AgentMemory`` on the store at ``path``."""

    def __init__(self, path: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.read() == {"ready": True}

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], WAIT_S)
        assert ready, "the worker did not answer (hang guard)"
        line = self.proc.stdout.readline()
        assert line, f"the worker ended (exit {self.proc.poll()})"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def send(self, cmd: str, *args: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([cmd, *args]) + "\n")
        self.proc.stdin.flush()

    def send_line(self, line: str) -> None:
        """A raw line on the worker's stdin (what a stalled worker waits for)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def call(self, cmd: str, *args: Any) -> Any:
        self.send(cmd, *args)
        answer = self.read()
        assert "error" not in answer, answer["error"]
        return answer["ok"]

    def close(self) -> None:
        self.call("close")
        self.proc.wait(timeout=WAIT_S)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)


def files_holding(folder: Path, needles: list[str]) -> list[str]:
    """Every (needle, file) where the needle's UTF-8 bytes are in a file under ``folder``."""
    out = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = f.read_bytes()
        out += [f"{n!r} in {f.name}" for n in needles if n.encode() in blob]
    return out
