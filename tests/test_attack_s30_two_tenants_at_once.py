"""Session 30 attack: two tenants writing at once over REST (a real server, threads).

Each tenant's time, quota and audit chain are its own (``test_attack_tenants_time`` shows
it one request at a time). Here both tenants' agents write concurrently through uvicorn:
acme with a daily quota it reaches, beta with none. Acme's writes past its quota are
refused (429) and beta's are not; neither tenant's count moves the other's; each chain
verifies, its seqs run 1..n without a gap and its times never run backwards, though the
two tenants' entries were appended interleaved.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import httpx
from interface_support import keyring, running_server

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

WRITERS = 4  # threads per tenant
EACH = 6  # writes per thread
QUOTA = 10  # acme's daily writes: fewer than its WRITERS * EACH


def test_two_tenants_writing_at_once_keep_their_own_quota_and_chain(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    acme = AgentContext(agent_id="o", role="orchestrator", tenant="acme")
    beta = AgentContext(agent_id="o", role="orchestrator", tenant="beta")
    mem.set_quota("acme", daily_writes=QUOTA, context=acme)
    ring, plain = keyring()
    statuses: dict[str, list[int]] = {"acme": [], "beta": []}
    lock = threading.Lock()

    with running_server(mem, ring) as base:

        def write(tenant: str, thread: int) -> None:
            headers = {"x-api-key": plain[f"{tenant}-orchestrator"]}
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                for i in range(EACH):
                    body = {"content": f"{tenant} fact {thread}-{i}"}
                    code = client.post("/v1/memories", json=body).status_code
                    with lock:
                        statuses[tenant].append(code)

        threads = [
            threading.Thread(target=write, args=(tenant, n))
            for n in range(WRITERS)
            for tenant in ("acme", "beta")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert sorted(set(statuses["beta"])) == [200]  # acme's quota is not beta's
    assert statuses["acme"].count(200) == QUOTA
    assert set(statuses["acme"]) == {200, 429}
    for ctx, writes in ((acme, QUOTA), (beta, WRITERS * EACH)):
        assert mem.stats(context=ctx).active == writes
        report = mem.verify_audit_chain(context=ctx)
        assert report.problems == [], report.problems
        entries = mem.audit_log(limit=1000, context=ctx)
        assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
        times = [datetime.fromisoformat(str(e.ts).replace("Z", "+00:00")) for e in entries]
        assert times == sorted(times)
        assert {e.tenant for e in entries} == {ctx.tenant}
    mem.close()
