"""An imported memory's role is one of the six roles, as the write path stores it.

``check_memories``/``check_rows`` hold an import to rows the write path could have stored,
but a memory's provenance role was not checked: an export edited to say ``"role": "god"``
(or ``""``) was restored, and the board and every read showed a role no agent can hold.
Such an export is now refused, nothing stored."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from forged_chain import rechained

from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")


@pytest.mark.parametrize("role", ["god", "", "ORCHESTRATOR", "system"])
def test_a_role_no_agent_holds_is_refused(tmp_path: Path, role: str) -> None:
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Oslo", context=A)
    data = json.loads(json.dumps(mem.export_user("acme", context=A)))
    target = AgentContext(agent_id="orch", role="orchestrator", tenant="copy")
    for roled in (data, rechained(data)):
        edited = copy.deepcopy(roled)
        edited["memories"][0]["provenance"]["role"] = role
        with pytest.raises(ValidationError, match="role"):
            mem.import_user(edited, context=target)
        assert not any(mem.store.tenant_residue(Scope("copy")).values())
    for each in AgentRole:  # every real role is restored
        kept = copy.deepcopy(data)
        kept["memories"][0]["provenance"]["role"] = each.value
        kept = rechained(kept)  # the edit vouched for by a chain made to agree
        other = AgentContext(agent_id="orch", role="orchestrator", tenant=f"t-{each.value}")
        assert mem.import_user(kept, context=other)["memories"] == 1
    mem.close()
