"""Adversarial finding (session 26): with the embedded store's file broken under a running
process (overwritten, or another process holding the write lock past the busy timeout),
``add``, ``recall`` and ``search`` raised SQLite's own ``sqlite3.DatabaseError``, not the
package's ``StoreError``: the check that another connection committed (``PRAGMA
data_version``) and the opening of a transaction ran outside the connection's typed
``execute``. An in-process caller catching ``AttestorError`` missed it, MCP answered a bare
"Error executing tool memory_add" (no code, no reason) and REST a generic 500, while
``stats``, ``list`` and ``get`` on the same file said ``store_error``: "embedded store
error: file is not a database".

Every call now raises ``StoreError`` naming SQLite's reason, on every surface.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from attestor_arango import AgentMemory
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError
from attestor_arango.interfaces.api.app import create_app

CALLS = {
    "add": lambda m: m.add("Bob likes coffee"),
    "recall": lambda m: m.recall("coffee"),
    "search": lambda m: m.search("coffee"),
    "list": lambda m: m.list(),
    "stats": lambda m: m.stats(),
}


def _broken(tmp_path: Path) -> AgentMemory:
    """A memory whose store file (and write-ahead log) is overwritten while it is open."""
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann likes tea")
    for file in tmp_path.iterdir():
        if file.name.startswith("m.db"):
            with file.open("r+b") as fh:
                fh.write(b"not a database page " * 2048)
    return mem


@pytest.mark.parametrize("call", list(CALLS))
def test_a_broken_store_file_is_a_store_error(tmp_path: Path, call: str) -> None:
    mem = _broken(tmp_path)
    with pytest.raises(StoreError, match="not a database"):
        CALLS[call](mem)


def test_rest_says_store_error_for_a_write_to_a_broken_store(tmp_path: Path) -> None:
    mem = _broken(tmp_path)
    with TestClient(create_app(mem, None), base_url="http://127.0.0.1:8000") as client:
        for method, path, body in [
            ("POST", "/v1/memories", {"content": "Bob likes coffee"}),
            ("POST", "/v1/recall", {"query": "coffee"}),
        ]:
            answer = client.request(method, path, json=body)
            assert answer.status_code == 503, (path, answer.text)
            assert answer.json()["code"] == "store_error", (path, answer.text)
