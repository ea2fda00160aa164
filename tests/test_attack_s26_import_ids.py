"""An imported memory's id must be one the audit chain records as it is.

The import's audit entry records each restored row by its id, and the chain keeps a
string verbatim only when it is an identifier (``core.audit.token``: letters, digits and
``_.:@+/=-``, starting with a letter or digit); any other string becomes a digest. An
export edited to hold an id such as ``a,b``, ``α`` or ``../x`` was imported, and then the
tenant's own verification reported the restored row as inserted behind the chain's back
(``row_unrecorded``) and a recorded row as missing: a false tamper alarm on a fresh
import (a successor id so: ``row_modified``). Such an id is now refused, nothing stored."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from forged_chain import rechained

from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")


@pytest.fixture
def exported(tmp_path: Path) -> dict[str, Any]:
    mem = AgentMemory(tmp_path / "src.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=A)))
    mem.close()
    return data


@pytest.mark.parametrize("row_id", ["a,b", "α", "../x", "a#b", "a%b", "-a", "_a"])
def test_an_id_the_chain_cannot_record_is_refused(
    tmp_path: Path, exported: dict[str, Any], row_id: str
) -> None:
    data = copy.deepcopy(exported)
    data["memories"][0]["id"] = row_id
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    with pytest.raises(ValidationError, match="letters, digits"):
        mem.import_user(data, context=A)
    assert not any(mem.store.tenant_residue(Scope("acme")).values())
    mem.close()


def test_a_successor_id_the_chain_cannot_record_is_refused(
    tmp_path: Path, exported: dict[str, Any]
) -> None:
    data = copy.deepcopy(exported)
    row = data["memories"][0]
    row.update(superseded_by="a,b", status="superseded", t_expired=row["t_created"])
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    with pytest.raises(ValidationError, match="superseded_by must be"):
        mem.import_user(data, context=A)
    assert not any(mem.store.tenant_residue(Scope("acme")).values())
    mem.close()


@pytest.mark.parametrize("row_id", ["a/b", "x.y", "a:b", "a+b", "a=b", "A" * 128, "mem-1"])
def test_an_id_the_chain_records_verifies_after_the_import(
    tmp_path: Path, exported: dict[str, Any], row_id: str
) -> None:
    data = copy.deepcopy(exported)
    data["memories"][0]["id"] = row_id
    data = rechained(data)  # an edited export whose chain was made to agree with it
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    mem.import_user(data, context=A)
    report = mem.verify_audit_chain(context=A)
    mem.close()
    assert report.ok, report.to_dict()
