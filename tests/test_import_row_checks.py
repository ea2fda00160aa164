"""Adversarial finding: ``import_user`` stored rows the write path refuses.

An export is plain JSON that anyone can edit before importing it (REST
``/v1/governance/import``, CLI ``import``). Its memories were stored as given: content
of 100,000 characters (``add`` stops at 32,000), empty content or a NUL, a 5,000-character
entity, 1,000 tags, a lone surrogate in a tag or metadata (after which REST could no
longer list or export the tenant), validity ending before it starts, ``t_expired``
before ``t_created``, or a status that disagrees with ``t_expired`` (an "active" row
every replay hides, an "archived" row every replay shows), or a row superseded by
itself. Each import is now refused with a ``ValidationError`` naming the row, and
nothing is stored. A ``content_hash`` that is not
the content's (what dedup compares) was stored as given; it is derived data, so the
import now computes it from the content.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="n1")
Edit = Callable[[list[dict[str, Any]]], None]


def _set(index: int, **fields: Any) -> Edit:
    def edit(rows: list[dict[str, Any]]) -> None:
        rows[index].update(fields)

    return edit


# row 0: the superseded "Ann likes tea"; row 1: the active "Ann likes coffee"
EDITS: dict[str, Edit] = {
    "content over the limit": _set(1, content="a" * 100_000),
    "content empty": _set(1, content=""),
    "content with NUL": _set(1, content="Ann \x00 likes"),
    "entity over 256": _set(1, entity="e" * 5_000),
    "1000 tags": _set(1, tags=[f"t{i}" for i in range(1_000)]),
    "tag surrogate": _set(1, tags=["\ud800"]),
    "metadata surrogate": _set(1, metadata={"k": "\udc00"}),
    "validity reversed": _set(
        1, valid_from="2025-06-01T00:00:00Z", valid_until="2025-01-01T00:00:00Z"
    ),
    "closed before created": _set(0, t_expired="2000-01-01T00:00:00Z"),
    "active with t_expired": _set(0, status="active", superseded_by=None),
    "archived without t_expired": _set(1, status="archived"),
    "superseded without successor": _set(0, superseded_by=None),
    "its own successor": lambda rows: rows[0].update(superseded_by=rows[0]["id"]),
    "id of 100,000 characters": _set(1, id="x" * 100_000),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_an_export_row_the_write_path_refuses_is_not_imported(tmp_path: Path, case: str) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    mem.add("Ann likes coffee", entity="Ann", category="drink", context=A)
    export = mem.export_user("acme", context=A)
    assert [m["status"] for m in export["memories"]] == ["superseded", "active"]
    edited = copy.deepcopy(export)
    EDITS[case](edited["memories"])
    with pytest.raises(ValidationError):
        mem.import_user(edited, context=B)
    assert mem.stats(context=B).total == 0 and mem.stats(context=B).audit_entries == 0
    mem.import_user(export, context=B)  # the export as made still imports
    assert mem.verify_audit_chain(context=B).ok
    mem.close()


def test_an_imported_content_hash_is_the_contents(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    export = mem.export_user("acme", context=A)
    export["memories"][0]["content_hash"] = "0" * 64
    mem.import_user(export, context=B)
    (row,) = mem.list(context=B)
    assert row.content_hash == mem.list(context=A)[0].content_hash
    # so the same words again are the same memory, as in the exporting tenant
    assert mem.add("Ann likes tea", entity="Ann", category="drink", context=B).id == row.id
    assert mem.verify_audit_chain(context=B).ok
    mem.close()


def test_rest_answers_422_and_stores_nothing(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.add("Ann likes tea", entity="Ann", category="drink", context=A)
    export = mem.export_user("acme", context=A)
    export["memories"][0]["content"] = "Ann " * 20_000
    key = ApiKey(id="k", sha256=hash_key("sk"), tenant="beta", roles=("orchestrator",),
                 agent_ids=("orch",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    answer = client.post("/v1/governance/import", json={"data": export},
                         headers={"Authorization": "Bearer sk"})  # fmt: skip
    assert answer.status_code == 422, answer.text
    assert mem.stats(context=B).total == 0
    mem.close()
