"""Session 23 attack battery: a recall being traced while another process purges its tenant.

A recall writes its trace events as it goes (the tenant's own trace file). A purge
deletes the tenant's trace files after it removed the rows. A recall that began before
the purge and wrote events after the purge deleted the files left a new trace file of the
erased tenant holding the erased rows' ids (and, with ``include_content``, the query),
while the purge reported success. The purge here is the CLI, another process, run while
the recall embeds its query (between the recall's first event and its lanes' events).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n")
OTHER = AgentContext(agent_id="orch", role="orchestrator", tenant="keeper", namespace="n")
RACING = "who is Quillerbrand"


class RacingEmbedder(HashingEmbedder):
    """Runs ``during`` when it embeds ``RACING``: another process's work landing then."""

    during = staticmethod(lambda: None)

    def embed(self, texts: list[str]) -> np.ndarray:
        if texts == [RACING]:
            self.during()
        return super().embed(texts)


def _cli_purge(folder: Path, tenant: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.update(ATTESTOR_PATH=str(folder / "mem.db"), ATTESTOR_EMBEDDER="hashing")
    env.update(ATTESTOR_TRACE="1", ATTESTOR_TRACE_PATH=str(folder / "trace.jsonl"))
    env.update(XDG_DATA_HOME=str(folder / "xdg"))
    cmd = [sys.executable, "-m", "attestor_arango.interfaces.cli.main", "purge"]
    cmd += ["--tenant", tenant, "--reason", "erasure request", "--yes", "--json"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


def _holding(folder: Path, needles: list[str]) -> list[str]:
    out = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = f.read_bytes()
        out += [f"{n!r} in {f.name}" for n in needles if n.encode() in blob]
    return out


def test_a_recall_traced_across_its_tenants_purge_leaves_no_trace_of_it(tmp_path: Path) -> None:
    trace = TraceSettings(enabled=True, path=str(tmp_path / "trace.jsonl"), include_content=True)
    embedder = RacingEmbedder(64)
    mem = AgentMemory(
        config=Config(path=str(tmp_path / "mem.db"), trace=trace),
        embedder=embedder,
        clock=ManualClock(),
    )
    gone = mem.add("Quillerbrand keeps the ledger", context=SUBJECT).id
    mem.add("the keeper likes green tea", context=OTHER)
    assert mem.recall("Quillerbrand ledger", context=SUBJECT).results  # traced
    assert mem.recall("keeper tea", context=OTHER).results
    embedder.during = lambda: _cli_purge(tmp_path, "subject")
    mem.recall(RACING, context=SUBJECT)  # the purge runs while this recall embeds its query
    embedder.during = lambda: None
    folder = tmp_path / "trace.jsonl.tenants"
    # no word anywhere; no id in a trace file (the audit chain keeps ids by design)
    assert _holding(tmp_path, ["Quillerbrand"]) + _holding(folder, [gone]) == []
    # the other tenant's events stay; a recall of the subject after its purge is traced
    assert _holding(folder, ["keeper tea"]) != []
    mem.recall("Quillerbrand again", context=SUBJECT)
    assert _holding(folder, ["Quillerbrand again"]) != []
    mem.close()
