"""Session 27 attack: an export's episodes, entities, relations and quota were restored as edited.

The import checks an export's memories against the row digests its chain recorded and the
chain's end against its head, but nothing in the chain records an episode, an entity, a
relation or the quota: an export whose episode text was rewritten (what the user said), whose
relation pointed elsewhere or whose quota was lifted was restored, and its ``import`` entry
vouched for it. An export's head now carries a digest of each of those sections (signed with
the head when the store signs), and the import refuses a section that does not match, naming
it. Nothing is stored on a refusal; a whole export still restores.
"""

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
from attestor_arango.governance.import_source import section_digests
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
COPY = AgentContext(agent_id="orch", role="orchestrator", tenant="copy", namespace="n1")
Edit = Callable[[dict[str, Any]], None]


def _export(path: Path, signer: Signer | None = None) -> dict[str, Any]:
    mem = AgentMemory(path, embedder=HashingEmbedder(64))
    mem.signer = signer
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    mem.ingest_round({"user": "I live in Paris.", "assistant": "Noted."}, context=A)
    mem.set_quota("acme", daily_writes=50, context=A)
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=A)))
    mem.close()
    assert data["episodes"] and data["entities"] and data["relations"]
    return data


def _text(d: dict[str, Any]) -> None:
    d["episodes"][0]["user_text"] = "I owe Bob 10000 EUR."


def _drop_episode(d: dict[str, Any]) -> None:
    d["episodes"].pop()


def _alias(d: dict[str, Any]) -> None:
    d["entities"][0]["aliases"] = [*d["entities"][0]["aliases"], "Mallory"]


def _target(d: dict[str, Any]) -> None:
    d["relations"][0]["target"] = "berlin"


def _added_relation(d: dict[str, Any]) -> None:
    d["relations"].append({**d["relations"][0], "id": "forged", "target": "berlin"})


def _quota(d: dict[str, Any]) -> None:
    d["quota"] = {"daily_writes": None}


EDITS: dict[str, tuple[Edit, str]] = {
    "an episode's text": (_text, "episodes"),
    "an episode dropped": (_drop_episode, "episodes"),
    "an entity's alias": (_alias, "entities"),
    "a relation's target": (_target, "relations"),
    "a relation added": (_added_relation, "relations"),
    "the quota lifted": (_quota, "quota"),
}


def _refused(mem: AgentMemory, data: dict[str, Any], *match: str) -> None:
    for ctx in (A, COPY):  # restored as its own tenant, or copied to another
        with pytest.raises(ValidationError) as refused:
            mem.import_user(data, context=ctx)
        for said in match:
            assert said in refused.value.message, refused.value.message
        assert not any(mem.store.tenant_residue(Scope(ctx.tenant)).values())
        assert mem.store.count_rows(Scope(ctx.tenant))["audit"] == 0


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _export(tmp_path_factory.mktemp("plain") / "src.db")


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Signer]:
    signer = Signer.generate()
    return _export(tmp_path_factory.mktemp("signed") / "src.db", signer), signer


@pytest.mark.parametrize("case", list(EDITS))
def test_an_edited_section_is_refused_naming_it(
    tmp_path: Path, plain: dict[str, Any], case: str
) -> None:
    edit, section = EDITS[case]
    data = copy.deepcopy(plain)
    edit(data)
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, f"'{section}'", "changed after it was exported")
    mem.close()


@pytest.mark.parametrize("case", list(EDITS))
def test_a_signed_export_edited_with_its_digest_rewritten_is_refused(
    tmp_path: Path, signed: tuple[dict[str, Any], Signer], case: str
) -> None:
    data, signer = copy.deepcopy(signed[0]), signed[1]
    EDITS[case][0](data)
    data["chain"]["sections"] = section_digests(data)  # as its editor can, without the key
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, "signature")
    mem.signer = signer  # restored where it was written
    _refused(mem, data, "signature")
    mem.close()


def test_an_export_whose_head_names_no_sections_is_refused(
    tmp_path: Path, plain: dict[str, Any]
) -> None:
    data = copy.deepcopy(plain)
    del data["chain"]["sections"]  # as written before this version, or removed
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    _refused(mem, data, "no digest")
    data["chain"]["sections"] = {"episodes": 7}
    _refused(mem, data, "no digest")
    mem.close()


@pytest.mark.parametrize("with_key", [False, True])
def test_a_whole_export_restores(
    tmp_path: Path,
    plain: dict[str, Any],
    signed: tuple[dict[str, Any], Signer],
    with_key: bool,
) -> None:
    data, signer = (signed[0], signed[1]) if with_key else (plain, None)
    assert set(data["chain"]["sections"]) == {"episodes", "entities", "relations", "quota"}
    mem = AgentMemory(tmp_path / "dst.db", embedder=HashingEmbedder(64))
    mem.signer = signer
    for ctx in (A, COPY):
        counts = mem.import_user(copy.deepcopy(data), context=ctx)
        assert counts["episodes"] == len(data["episodes"])
        assert counts["relations"] == len(data["relations"])
        assert mem.verify_audit_chain(context=ctx).ok
        again = json.loads(json.dumps(mem.export_user(ctx.tenant, context=ctx)))
        assert [e["user_text"] for e in again["episodes"]] == [
            e["user_text"] for e in data["episodes"]
        ]
    mem.close()
