"""An edited export's top-level fields are checked before anything is stored.

Found by the session 14 red team: ``"quota": 5`` (a number where an object belongs) made
``import_user`` raise ``AttributeError``, which REST answered with a 500; and the export's
``tenant``, ``exported_at`` and last audit hash were copied as given into the import's
audit entry, so any JSON (a nested object, most of a megabyte of text) landed in the
tenant's chain, which cannot be edited afterwards.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from interface_support import fingerprint, keyring
from starlette.testclient import TestClient

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
EDITS: dict[str, tuple[str, Any]] = {
    "quota a number": ("quota", 5),
    "quota text": ("quota", "unlimited"),
    "quota a list": ("quota", [1]),
    "tenant an object": ("tenant", {"nested": {"deep": ["x"] * 50}}),
    "tenant a long text": ("tenant", "t" * 200_000),
    "exported_at a number": ("exported_at", 12),
    "last hash an object": ("audit", [{"hash": {"not": "a hash"}}]),
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    clock = ManualClock()
    src = AgentMemory(
        tmp_path_factory.mktemp("src") / "memory.db", embedder=HashingEmbedder(64),
        clock=clock, ids=SeededIdSource(6),
    )  # fmt: skip
    src.add("Alice lives in Paris", entity="alice", category="city", context=ORCH)
    src.set_quota("acme", daily_writes=50, context=ORCH)
    data: dict[str, Any] = json.loads(json.dumps(src.export_user("acme", context=ORCH)))
    src.close()
    return data


def _target(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "memory.db", embedder=HashingEmbedder(64),
        clock=ManualClock(1_767_225_600_000_000 + 3_600_000_000), ids=SeededIdSource(7),
    )  # fmt: skip


@pytest.mark.parametrize("case", list(EDITS))
def test_a_malformed_top_level_field_is_a_422_and_stores_nothing(
    tmp_path: Path, exported: dict[str, Any], case: str
) -> None:
    field, value = EDITS[case]
    data = copy.deepcopy(exported)
    data[field] = value
    mem = _target(tmp_path)
    ring, plain = keyring()
    before = fingerprint(mem)
    client = TestClient(create_app(mem, ring), raise_server_exceptions=False)
    answer = client.post(
        "/v1/governance/import",
        json={"data": data},
        headers={"x-api-key": plain["acme-orchestrator"]},
    )
    after = fingerprint(mem)
    audit = mem.audit_log(limit=1000, context=ORCH)
    mem.close()
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_input"
    assert after == before and [e.action for e in audit] == []


def test_the_unedited_export_still_imports_with_its_source_noted(
    tmp_path: Path, exported: dict[str, Any]
) -> None:
    mem = _target(tmp_path)
    assert mem.import_user(copy.deepcopy(exported), context=ORCH)["memories"] == 1
    entry = next(e for e in mem.audit_log(limit=100, context=ORCH) if e.action == "import")
    mem.close()
    assert entry.details["source"]["tenant"] == "acme"
    assert entry.details["source"]["audit_last_hash"] == exported["audit"][-1]["hash"]


def test_the_quota_object_is_restored(tmp_path: Path, exported: dict[str, Any]) -> None:
    mem = _target(tmp_path)
    mem.import_user(copy.deepcopy(exported), context=ORCH)
    status = mem.quota_status(context=ORCH)
    mem.close()
    assert status["daily_writes"] == 50
