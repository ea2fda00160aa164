"""An export is of one tenant: an import refuses one whose header and rows disagree.

Into the tenant an export came from, an import keeps every id and signature (a restore);
into another it gives the rows new ids and leaves them unsigned (``governance/rekey.py``),
since a signature does not cover the tenant. Which case applies was read from the
export's ``tenant`` header alone, while every row's own ``tenant`` was overwritten. So
tenant A's export with its header edited to B (or deleted) was restored into tenant B with
A's ids and signatures, and ``verify_all`` vouched for every row as the service's own
signed writes in B. Such an export is now refused, nothing stored."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="n1")


@pytest.fixture
def signed(tmp_path: Path) -> tuple[AgentMemory, dict[str, Any]]:
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    mem.signer = Signer.generate()
    mem.add("Ann lives in Oslo", entity="Ann", category="home", context=A)
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    exported = json.loads(json.dumps(mem.export_user("acme", context=A)))
    return mem, exported


def _retitled(data: dict[str, Any]) -> None:
    data["tenant"] = "beta"


def _untitled(data: dict[str, Any]) -> None:
    del data["tenant"]


def _one_row_elsewhere(data: dict[str, Any]) -> None:
    data["memories"][1]["tenant"] = "other"


def _one_entry_elsewhere(data: dict[str, Any]) -> None:
    data["audit"][0]["tenant"] = "other"


FORGERIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "header names another tenant than its rows": _retitled,
    "header names no tenant": _untitled,
    "a row of another tenant": _one_row_elsewhere,
    "an audit entry of another tenant": _one_entry_elsewhere,
}


@pytest.mark.parametrize("kind", list(FORGERIES))
def test_an_export_whose_tenant_claims_disagree_is_refused(
    signed: tuple[AgentMemory, dict[str, Any]], kind: str
) -> None:
    mem, exported = signed
    forged = copy.deepcopy(exported)
    FORGERIES[kind](forged)
    with pytest.raises(ValidationError, match="tenant"):
        mem.import_user(forged, context=B)
    assert not any(mem.store.tenant_residue(Scope("beta")).values())
    assert mem.store.count_rows(Scope("beta"))["audit"] == 0
    mem.close()


def test_the_honest_copy_is_rekeyed_and_unsigned(
    signed: tuple[AgentMemory, dict[str, Any]],
) -> None:
    mem, exported = signed
    assert mem.import_user(exported, context=B)["rekeyed"] == 1
    report = mem.verify_all(context=B)
    assert report["valid"] == 0 and len(report["unsigned"]) == 2  # copies, not the originals
    mem.close()


def test_a_restore_into_its_own_tenant_keeps_ids_and_signatures(
    signed: tuple[AgentMemory, dict[str, Any]],
) -> None:
    mem, exported = signed
    assert mem.purge_user("acme", "restore drill", context=A).ok
    assert mem.import_user(exported, context=A)["rekeyed"] == 0
    assert mem.verify_all(context=A)["ok"]
    mem.close()
