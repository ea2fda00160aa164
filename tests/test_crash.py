"""Durability: a writer killed with SIGKILL loses no acknowledged memory."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

WRITER = """
import sys
from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

mem = AgentMemory(sys.argv[1], embedder=HashingEmbedder(32))
ctx = AgentContext(agent_id="writer", tenant="crash", namespace="n")
i = int(sys.argv[2])
while True:
    m = mem.add(f"fact number {i} entity e{i % 7}", entity=f"e{i % 7}", category="c",
                context=ctx)
    print(m.id, flush=True)
    i += 1
"""


def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(20261129)
    acked: list[str] = []
    start = 0
    for _round in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(start)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first, "the writer acknowledged nothing"
        acked.append(first)
        deadline = time.monotonic() + rng.uniform(0.05, 0.6)
        while time.monotonic() < deadline:
            line = proc.stdout.readline().strip()
            if line:
                acked.append(line)
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        acked += [x for x in rest.split() if x]  # printed before the kill landed
        start += 100_000

        with AgentMemory(db, embedder=HashingEmbedder(32)) as mem:
            assert mem.store.integrity_check() == "ok"  # type: ignore[attr-defined]
            ctx = AgentContext(agent_id="check", tenant="crash", namespace="n")
            stored = {m.id for m in mem.list(status="all", limit=10_000, context=ctx)}
            missing = [i for i in acked if i not in stored]
            assert missing == [], f"acknowledged but lost after SIGKILL: {missing[:5]}"
    assert len(acked) >= 10
