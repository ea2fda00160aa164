"""``import_user`` checks an export's quota.daily_writes with set_quota's own check: an
import cannot store a quota ``set_quota`` would refuse, and a refused import changes
nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attack_support import stored

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.governance.import_source import section_digests
from attestor_arango.governance.quotas import MAX_DAILY_WRITES
from attestor_arango.memory import AgentMemory

SOURCE = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n")


@pytest.fixture
def mem(tmp_path: Path) -> AgentMemory:
    m = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    m.add("Ann likes green tea", entity="ann", context=SOURCE)
    m.set_quota("acme", daily_writes=5, context=SOURCE)
    return m


def dump(mem: AgentMemory, daily_writes: object) -> dict:
    data = json.loads(json.dumps(mem.export_user("acme", context=SOURCE)))
    data["quota"] = {"daily_writes": daily_writes}
    data["chain"]["sections"] = section_digests(data)  # as the editor of an unsigned export can
    return data


@pytest.mark.parametrize("value", [MAX_DAILY_WRITES + 1, 10**30, -1, True, 2.5, "5", [5], {"n": 5}])
def test_an_import_refuses_a_quota_set_quota_refuses(mem: AgentMemory, value: object) -> None:
    with pytest.raises(ValidationError) as refused_by_set_quota:
        mem.set_quota("copy", daily_writes=value, context=COPY)
    data = dump(mem, value)  # an export is audited: taken before the state is
    before = stored(mem)
    with pytest.raises(ValidationError) as refused:
        mem.import_user(data, context=COPY)
    assert refused_by_set_quota.value.message in refused.value.message
    assert stored(mem) == before
    assert mem.quota_status("copy", context=COPY)["daily_writes"] is None


@pytest.mark.parametrize("value", [0, 1, MAX_DAILY_WRITES, None])
def test_an_import_keeps_a_quota_set_quota_accepts(mem: AgentMemory, value: object) -> None:
    report = mem.import_user(dump(mem, value), context=COPY)
    assert report["memories"] == 1
    assert mem.quota_status("copy", context=COPY)["daily_writes"] == value
