"""Issue 18 item 9 over a real REST server: Attestor's names through MemoryClient.

A key can never reach another tenant through the new keyword names either.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from interface_support import keyring, running_server

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory


def test_filtered_search_and_tenant_keywords_over_rest(tmp_path: Path) -> None:
    keys, plain = keyring()
    orchestrator = next(k for k in plain if k.startswith("acme-orchestrator"))
    with (
        AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64)) as mem,
        running_server(mem, keys) as url,
        MemoryClient(url, api_key=plain[orchestrator]) as client,
    ):
        client.add("Bob is allergic to peanuts", entity="bob", category="diet")
        client.add("Alice is the engineering manager", entity="alice", category="role")
        assert [m.entity for m in client.search(category="diet")] == ["bob"]
        assert [m.entity for m in client.search("peanuts", entity="bob")] == ["bob"]
        exported = client.export_user(external_id="acme")
        assert len(exported["memories"]) == 2
        assert client.set_quota(user_id="acme", daily_writes=100)["daily_writes"] == 100
        for call in (
            lambda: client.export_user(external_id="beta"),
            lambda: client.purge_user(external_id="beta", reason="GDPR erasure request #9"),
            lambda: client.set_quota(user_id="beta", daily_writes=1),
        ):
            with pytest.raises(AccessDenied, match="cannot act on"):
                call()
        pack = client.recall_as_pack("who is allergic?")
        assert pack.prompt == pack.render_prompt() and pack.memories
