"""`attestor-arango demo`: the product in one minute, on a fresh embedded store."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from attestor_arango.clock import iso
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.errors import AccessDenied
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Memory


def _memories_table(title: str, rows: list[Memory]) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("content", "entity", "status", "agent", "t_created", "t_expired"):
        table.add_column(col)
    for m in rows:
        table.add_row(
            m.content,
            m.entity or "",
            m.status.value,
            m.provenance.agent_id,
            iso(m.us("t_created")) or "",
            iso(m.us("t_expired")) or "",
        )
    return table


def run_demo(path: str | Path | None = None, console: Console | None = None) -> dict[str, object]:
    """Runs the scripted demo and returns the figures it showed (used by tests)."""
    console = console or Console()
    workdir = Path(path) if path else Path(tempfile.mkdtemp(prefix="attestor-demo-"))
    mem = AgentMemory(workdir / "demo.db")
    try:
        orch = AgentContext(
            agent_id="orchestrator",
            role=AgentRole.ORCHESTRATOR,
            tenant="demo",
            namespace="project:acme",
        )
        planner = orch.as_agent("planner", AgentRole.PLANNER)
        researcher = planner.as_agent("researcher", AgentRole.RESEARCHER)
        reviewer = orch.as_agent("reviewer", AgentRole.REVIEWER)
        console.rule(f"attestor-arango demo  (store: {workdir / 'demo.db'})")
        console.print(f"embedder: [bold]{mem.embedder.name}[/] ({mem.embedder.dimension}-d)")

        first = mem.add(
            "Alice is the engineering manager", entity="alice", category="role", context=planner
        )
        mem.add(
            "The payments service is written in Go",
            entity="payments",
            category="language",
            context=researcher,
        )
        mem.add(
            "Deploys happen on Fridays after the 14:00 review",
            entity="deploys",
            category="schedule",
            context=researcher,
        )
        checkpoint = mem.clock.now_us()
        second = mem.add(
            "Alice is the CTO; Bob now runs engineering",
            entity="alice",
            category="role",
            context=orch,
        )
        console.print(
            f"[green]superseded[/] {first.id[-8:]} -> {second.id[-8:]} "
            "(same entity + category, different content)"
        )

        try:
            mem.add("Reviewers should not write", context=reviewer)
            refused = False
        except AccessDenied as exc:
            refused = True
            console.print(f"[red]refused[/] reviewer write: {exc.message}")

        response = mem.recall("who runs engineering?", context=researcher)
        table = Table(title="recall: who runs engineering?", title_justify="left")
        for col in ("#", "score", "content", "vector", "bm25"):
            table.add_column(col)
        for i, r in enumerate(response.results, 1):
            b = r.breakdown
            table.add_row(
                str(i),
                f"{r.score:.4f}",
                r.memory.content,
                str(b.vector_rank or "-"),
                str(b.bm25_rank or "-"),
            )
        console.print(table)

        past = mem.list(as_of=checkpoint / 1_000_000, context=orch)
        console.print(_memories_table(f"as_of {iso(checkpoint)}: what we believed then", past))
        timeline = mem.timeline("alice", context=orch)
        console.print(_memories_table("timeline: alice", timeline))

        audit = mem.audit_log(context=orch)
        atable = Table(title="audit trail (hash-chained)", title_justify="left")
        for col in ("seq", "action", "agent", "target", "hash"):
            atable.add_column(col)
        for e in audit:
            atable.add_row(str(e.seq), e.action, e.agent_id, (e.target or "")[-8:], e.hash[:16])
        console.print(atable)
        return {
            "recall": [r.memory.content for r in response.results],
            "as_of": [m.content for m in past],
            "timeline": [m.status.value for m in timeline],
            "reviewer_refused": refused,
            "audit_actions": [e.action for e in audit],
        }
    finally:
        mem.close()
