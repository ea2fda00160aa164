"""``*`` is no agent's name, in every entry point, not only over REST.

REST refuses ``X-Agent-Id: *`` and a ``*`` trail entry ("'*' is not an agent id": in a
key file ``*`` means any agent), but ``AgentContext(agent_id="*")`` (the in-process API,
the CLI and MCP through ATTESTOR_AGENT_ID) was accepted and stored ``*`` as the writer of
its memories, and an export edited to name ``*`` as a memory's agent, parent or trail
entry was imported. A no-auth server whose configured identity was ``*`` started and then
refused every request that named no agent. Now the context and the import refuse it the
same way; nothing is stored.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from forged_chain import rechained

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
WILD = ["*", " * "]


@pytest.mark.parametrize("name", WILD)
def test_a_context_cannot_be_agent_star(name: str) -> None:
    with pytest.raises(ValidationError, match=r"'\*' is not an agent id"):
        AgentContext(agent_id=name)
    with pytest.raises(ValidationError, match=r"'\*' is not an agent id"):
        AgentContext(agent_id="bot", agent_trail=("planner", name))
    with pytest.raises(ValidationError, match=r"'\*' is not an agent id"):
        AgentContext(agent_id="bot", parent_agent_id=name)
    with pytest.raises(ValidationError, match=r"'\*' is not an agent id"):
        A.as_agent(name, "researcher")


def test_names_holding_a_star_are_still_agent_ids() -> None:
    for name in ("**", "bot*", "*bot", "a * b"):
        assert AgentContext(agent_id=name).agent_id == name
    assert AgentContext(agent_id="bot", session_id="*").session_id == "*"  # not an agent


@pytest.mark.parametrize("field", ["agent_id", "parent_agent_id", "agent_trail"])
def test_an_export_naming_agent_star_is_refused(tmp_path: Path, field: str) -> None:
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    child = A.as_agent("bot", "executor")
    mem.add("Ann lives in Oslo", context=child)
    data = json.loads(json.dumps(mem.export_user("acme", context=A)))
    target = AgentContext(agent_id="orch", role="orchestrator", tenant="copy")
    for chained in (data, rechained(data)):  # its chain made to agree: nothing else objects
        edited = copy.deepcopy(chained)
        prov = edited["memories"][0]["provenance"]
        if field == "agent_trail":
            prov["agent_trail"] = ["*", *prov["agent_trail"]]
        else:
            prov[field] = "*"
        with pytest.raises(ValidationError, match=r"'\*' is not an agent id"):
            mem.import_user(edited, context=target)
        assert not any(mem.store.tenant_residue(Scope("copy")).values())
    assert mem.import_user(rechained(data), context=target)["memories"] == 1
    mem.close()
