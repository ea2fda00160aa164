"""Adversarial finding: a recall or search query had no length limit but the body's.

MCP's tools take at most 4000 characters, yet REST and the library took a query of any
size: a 1 MB query of distinct words cost ~2 s of CPU per recall (ranking's work grows
with the query's words), a cheap way to keep a server busy. A query is now at most
``max_content_chars`` characters (32,000 by default: no memory is longer) for recall,
its pack and explanation, and keyword search; a longer one is a 422 naming the limit,
and nothing is read or audited.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory

LIMIT = 32_000  # Config.max_content_chars' default
CALLS: dict[str, Callable[[AgentMemory, str], Any]] = {
    "recall": lambda m, q: m.recall(q, context=CTX),
    "recall_as_pack": lambda m, q: m.recall_as_pack(q, context=CTX),
    "explain_recall": lambda m, q: m.explain_recall(q, context=CTX),
    "search": lambda m, q: m.search(q, context=CTX),
}


def _query(size: int) -> str:
    return ("tea " * (size // 4 + 1))[:size]


@pytest.mark.parametrize("call", list(CALLS))
def test_the_library_refuses_a_query_over_the_limit(tmp_path: Path, call: str) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match=f"over the limit of {LIMIT}") as refused:
        CALLS[call](mem, _query(LIMIT + 1))
    assert refused.value.details["limit"] == LIMIT
    assert stored(mem) == before
    CALLS[call](mem, _query(LIMIT))  # at the limit: answered
    mem.close()


@pytest.mark.parametrize("path", ["/v1/recall", "/v1/recall/pack", "/v1/search"])
def test_rest_refuses_a_query_over_the_limit(tmp_path: Path, path: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    answer = client.post(path, json={"query": _query(200_000)}, headers=AUTH)
    assert answer.status_code == 422, answer.text[:300]
    assert f"over the limit of {LIMIT}" in answer.json()["message"]
    fine = client.post(path, json={"query": "green tea"}, headers=AUTH)
    assert fine.status_code == 200, fine.text[:300]
    mem.close()
