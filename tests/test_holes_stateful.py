"""A hypothesis state machine over three tenants (issue 16): random adds, ingests, recalls,
exports and re-imports, retention runs and purges, with recall tracing on (queries in the
trace file). After each purge no byte of the purged tenant's words is in any file of the
store or the trace file, and the other tenants' rows, trace events and chains are
unchanged and verify."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from interface_support import fingerprint

from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

TENANTS = ("ta", "tb", "tc")
WORDS = {"ta": "Xylofant", "tb": "Quobbler", "tc": "Zentrivo"}  # each only in its tenant
tenants = st.sampled_from(TENANTS)


def ctx(tenant: str) -> AgentContext:
    return AgentContext(agent_id="orch", role="orchestrator", tenant=tenant)


class Tenants(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="h16-state-"))
        self.trace = self.dir / "traces" / "recall-trace.jsonl"
        tracing = TraceSettings(enabled=True, path=str(self.trace), include_content=True)
        config = Config(path=str(self.dir / "memory.db"), trace=tracing)
        self.mem = AgentMemory(config=config, embedder=HashingEmbedder(32),
                               clock=ManualClock(), ids=SeededIdSource(1))  # fmt: skip
        self.n = 0

    def teardown(self) -> None:
        self.mem.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _others(self, tenant: str) -> dict[str, object]:
        return {t: (fingerprint(self.mem, t), self._events(t)) for t in TENANTS if t != tenant}

    def _events(self, tenant: str) -> list[str]:
        if not self.trace.exists():
            return []
        lines = self.trace.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if json.loads(line).get("tenant") == tenant]

    @rule(tenant=tenants)
    def recall(self, tenant: str) -> None:
        word = WORDS[tenant]
        self.mem.recall(f"where does {word} live?", context=ctx(tenant))

    @rule(tenant=tenants, n=st.integers(0, 3))
    def add(self, tenant: str, n: int) -> None:
        self.n += 1
        word = WORDS[tenant]
        self.mem.add(f"{word} note {self.n} lives in {word}ville", entity=word,
                     category=f"c{n}", context=ctx(tenant))  # fmt: skip

    @rule(tenant=tenants)
    def ingest(self, tenant: str) -> None:
        self.n += 1
        word = WORDS[tenant]
        turn = {"user": f"I live in {word}burg {self.n}.", "session_id": f"s-{word}"}
        self.mem.ingest_round(turn, context=ctx(tenant))

    @rule(tenant=tenants)
    def reimport(self, tenant: str) -> None:
        others = self._others(tenant)
        data = self.mem.export_user(tenant, context=ctx(tenant))
        assert self.mem.purge_user(tenant, "re-import", context=ctx(tenant)).ok
        self.mem.import_user(data, context=ctx(tenant))
        assert self._others(tenant) == others

    @rule(tenant=tenants)
    def retention(self, tenant: str) -> None:
        others = self._others(tenant)
        policy = [{"name": "old", "action": "delete", "older_than": "30d"}]
        self.mem.apply_retention(policy, context=ctx(tenant))
        assert self._others(tenant) == others

    @rule(tenant=tenants)
    def purge(self, tenant: str) -> None:
        others = self._others(tenant)
        report = self.mem.purge_user(tenant, f"erasure of {WORDS[tenant]}", context=ctx(tenant))
        assert report.ok, report.to_dict()
        assert self._others(tenant) == others
        word = WORDS[tenant].encode()
        for file in self.dir.rglob("*"):
            if file.is_file():
                assert word not in file.read_bytes(), f"{WORDS[tenant]} left in {file.name}"
        assert self._events(tenant) == []

    @invariant()
    def chains_verify(self) -> None:
        for tenant in TENANTS:
            report = self.mem.verify_audit_chain(context=ctx(tenant))
            assert report.ok, report.to_dict()["problems"][:3]


TestTenants = Tenants.TestCase
TestTenants.settings = settings(
    max_examples=8,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
