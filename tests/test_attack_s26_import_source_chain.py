"""An export edited after it was written is refused by the import (``import_source.py``).

An export carries the tenant's whole audit chain, whose entries record a digest of every
row written, closed or removed. An export whose row was edited by hand ("Ann owes Bob 10
EUR" made "10000 EUR") was imported, and the new tenant's ``verify_audit_chain`` answered
ok: its ``import`` entry vouched for the edited rows. On a store without signatures nothing
else showed the edit. The import now checks the rows and entries against the chain they
came with; an export without its chain (``audit`` empty) is refused since session 27."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n1")


@pytest.fixture
def exported(tmp_path: Path) -> dict[str, Any]:
    mem = AgentMemory(tmp_path / "src.db", embedder=HashingEmbedder(64))
    mem.add("Ann owes Bob 10 EUR", entity="Ann", category="debt", context=A)
    mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    mem.add("Ann lives in Rome", entity="Ann", category="home", context=A)
    gone = mem.add("Ann's old phone is 555", context=A)
    mem.forget(gone.id, context=A)
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)  # the forget not last
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=A)))
    mem.close()
    return data


def _row(data: dict[str, Any], content: str) -> dict[str, Any]:
    return next(m for m in data["memories"] if m["content"] == content)


def _unforget(data: dict[str, Any]) -> None:
    row = _row(data, "Ann's old phone is 555")
    row.update(t_expired=None, status="active")
    data["audit"] = [e for e in data["audit"] if e["action"] != "forget"]


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "content": lambda d: _row(d, "Ann owes Bob 10 EUR").update(content="Ann owes Bob 10000 EUR"),
    "valid_from": lambda d: _row(d, "Ann lives in Rome").update(valid_from="2001-01-01T00:00:00Z"),
    "entity": lambda d: _row(d, "Ann lives in Oslo").update(entity="Bob"),
    "an entry": lambda d: d["audit"][1].update(agent_id="someone-else"),
    "an entry removed": lambda d: d["audit"].pop(1),
    "un-forgotten": _unforget,
    "a row added": lambda d: d["memories"].append({**d["memories"][0], "id": "forged-1"}),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_export_edited_after_it_was_written_is_refused(
    tmp_path: Path, exported: dict[str, Any], edit: str
) -> None:
    data = copy.deepcopy(exported)
    EDITS[edit](data)
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    for ctx in (A, COPY):  # restored as its own tenant, or copied to another
        # an entry removed also leaves the list short of the head it names (session 27)
        with pytest.raises(ValidationError, match=r"does not match its own audit chain|cut short"):
            mem.import_user(data, context=ctx)
        assert not any(mem.store.tenant_residue(Scope(ctx.tenant)).values())
        assert mem.store.count_rows(Scope(ctx.tenant))["audit"] == 0
    mem.close()


def test_an_export_as_written_is_restored_and_verifies(
    tmp_path: Path, exported: dict[str, Any]
) -> None:
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    assert mem.import_user(exported, context=A)["rekeyed"] == 0
    assert mem.import_user(exported, context=COPY)["rekeyed"] == 1
    assert mem.verify_audit_chain(context=A).ok and mem.verify_audit_chain(context=COPY).ok
    mem.close()


def test_an_export_without_its_chain_is_refused(tmp_path: Path, exported: dict[str, Any]) -> None:
    """Restored as it was until session 27, with an import entry recording no source
    entry; now refused (tests/test_attack_s27_export_head.py): nothing vouches for its rows."""
    data = {**copy.deepcopy(exported), "audit": []}
    _row(data, "Ann owes Bob 10 EUR").update(content="Ann owes Bob 10000 EUR")
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    with pytest.raises(ValidationError, match="cut short"):
        mem.import_user(data, context=A)
    assert mem.store.count_rows(Scope("acme"))["audit"] == 0
    mem.close()
