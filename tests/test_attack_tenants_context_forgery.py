"""A context cannot grant itself a role's permissions in-process: a subclass of
``AgentContext`` that redefines ``permissions`` (or ``require``), or a context whose role
was swapped with ``object.__setattr__`` past the frozen dataclass, is refused with a typed
``ValidationError`` before any check or write. Before, a monitor subclass that declared
every permission stored facts and purged its tenant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import stored

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.context import Permission
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory


class AllPowerful(AgentContext):
    @property
    def permissions(self) -> frozenset[Permission]:
        return frozenset(Permission)

    def require(self, permission: Permission, operation: str) -> None:
        return None


def _swapped_role() -> AgentContext:
    ctx = AgentContext(agent_id="m", role="monitor", tenant="acme")
    object.__setattr__(ctx, "role", "orchestrator")  # a str, not an AgentRole
    return ctx


def _cleared_read_only() -> AgentContext:
    ctx = AgentContext(agent_id="m", role="orchestrator", tenant="acme", read_only=True)
    object.__setattr__(ctx, "read_only", 0)
    return ctx


FORGED: dict[str, Any] = {
    "subclass": lambda: AllPowerful(agent_id="m", role="monitor", tenant="acme"),
    "swapped role": _swapped_role,
    "read_only cleared": _cleared_read_only,
}


@pytest.mark.parametrize("name", list(FORGED))
def test_forged_contexts_are_refused_and_change_nothing(tmp_path: Path, name: str) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    owner = AgentContext(agent_id="o", role="orchestrator", tenant="acme")
    mem.add("Ann likes green tea", entity="ann", category="drink", context=owner)
    before = stored(mem)
    forged = FORGED[name]()
    calls = {
        "add": lambda: mem.add("Ann likes coffee", context=forged),
        "purge": lambda: mem.purge_user("acme", reason="r", context=forged),
        "recall": lambda: mem.recall("tea", context=forged),
    }
    for call, run in calls.items():
        with pytest.raises(ValidationError, match="context"):
            run()
        assert stored(mem) == before, call
    mem.close()
