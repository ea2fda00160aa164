"""Session 29 attack: a purge said nothing of the identifiers it leaves in the audit chain.

The chain outlives a purge by design, and each entry names the namespace and the agent id
it was made in and by, verbatim. A caller who made a person's name a namespace (LangGraph
namespaces are often ``("users", "<user id>")``) or an agent id found those words in the
store's file after ``purge_user`` reported ``ok`` with nothing in ``kept``: neither the
report nor its outcome entry said any word of the tenant stayed. The report's and the
outcome entry's ``kept["audit_chain"]`` now count what stays (the entries, the distinct
namespaces and agent ids they name), and the design notes say so.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

from pathlib import Path

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.langgraph import AttestorStore
from attestor_arango.memory import AgentMemory


def _word(*parts: str) -> str:
    return "".join(parts)


def test_a_purge_reports_the_namespaces_and_agent_ids_its_chain_keeps(tmp_path: Path) -> None:
    namespace, agent = _word("users/", "qz", "marvelin"), _word("agent", "-qzorbit")
    ctx = AgentContext(agent_id=agent, role="orchestrator", tenant="subject", namespace=namespace)
    helper = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64))
    mem.add("the subject likes green tea", context=ctx)
    mem.add("the subject walks the dog", context=helper)
    AttestorStore(mem, helper).put(("people", _word("qz", "lindqvist")), "k", {"text": "hi"})

    report = mem.purge_user("subject", "GDPR erasure request #29", context=helper)

    assert report.ok, report.to_dict()
    # entries: 2 adds, LangGraph's add and the add of its index of namespaces, the attempt;
    # 3 namespaces (LangGraph's under the context's), 2 agent ids
    kept = {"entries": 5, "namespaces": 3, "agent_ids": 2, "source_tenants": 0}
    assert report.kept["audit_chain"] == kept
    assert report.to_dict()["kept"]["audit_chain"] == kept
    outcome = [e for e in mem.audit_log(context=helper) if e.action == "purge_completed"][-1]
    assert outcome.details["kept"]["audit_chain"] == kept
    mem.close()
    # what the report counts is what the file holds: the identifiers, no word of a row
    raw = (tmp_path / "mem.db").read_bytes()
    assert namespace.encode() in raw and agent.encode() in raw
    assert b"green tea" not in raw and b"walks the dog" not in raw


def test_a_purge_of_a_tenant_that_never_wrote_keeps_its_own_entry_only(tmp_path: Path) -> None:
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="nobody", namespace="n1")
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64))

    report = mem.purge_user("nobody", "GDPR erasure request #30", context=ctx)

    only_its_own = {"entries": 1, "namespaces": 1, "agent_ids": 1, "source_tenants": 0}
    assert report.ok and report.kept == {"audit_chain": only_its_own}
    mem.close()


def test_a_purge_reports_the_tenants_its_imports_came_from(tmp_path: Path) -> None:
    source = _word("qz", "halvorsen")  # a tenant named for a person, exported and imported
    there = AgentContext(agent_id="orch", role="orchestrator", tenant=source, namespace="n1")
    here = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64))
    mem.add("the subject likes green tea", context=there)
    exported = mem.export_user(source, context=there)
    mem.purge_user(source, "GDPR erasure request #31", context=there)
    mem.import_user(exported, context=here)

    report = mem.purge_user("subject", "GDPR erasure request #32", context=here)

    assert report.ok, report.to_dict()
    assert report.kept["audit_chain"]["source_tenants"] == 1
    mem.close()
    # the import entry names its source tenant verbatim, as the report says
    assert source.encode() in (tmp_path / "mem.db").read_bytes()
