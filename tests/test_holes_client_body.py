"""What the library refuses as a ValidationError, the HTTP clients refuse the same way,
before or after the wire, and nothing is stored.

Found by the session 14 red team: ``MemoryClient.add(..., confidence=float("nan"))`` (or
Infinity anywhere in the arguments) raised httpx's bare ``ValueError`` from its JSON
encoder, which ``except AttestorError`` does not catch, and a lone surrogate in the text
died in the client's UTF-8 encoding instead of reaching the server's typed refusal.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from interface_support import fingerprint, keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.async_client import AsyncMemoryClient
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
BAD: list[tuple[str, dict[str, Any]]] = [
    ("a fact", {"confidence": float("nan")}),
    ("a fact", {"confidence": float("inf")}),
    ("a fact", {"metadata": {"score": float("-inf")}}),
    ("a fact \ud800 with a lone surrogate", {}),
]


@pytest.mark.parametrize(("content", "extra"), BAD)
def test_clients_refuse_what_the_library_refuses_with_the_same_type(
    tmp_path: Path, content: str, extra: dict[str, Any]
) -> None:
    mem = AgentMemory(
        tmp_path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock(),
        ids=SeededIdSource(5),
    )  # fmt: skip
    with pytest.raises(ValidationError):
        mem.add(content, context=ORCH, **extra)
    before = fingerprint(mem)
    ring, plain = keyring()
    key = plain["acme-orchestrator"]

    async def remote_async(url: str) -> None:
        async with AsyncMemoryClient(url, key, context=ORCH) as client:
            with pytest.raises(ValidationError):
                await client.add(content, **extra)

    with running_server(mem, ring) as url, MemoryClient(url, key, context=ORCH) as client:
        with pytest.raises(ValidationError):
            client.add(content, **extra)
        asyncio.run(remote_async(url))
        after = fingerprint(mem)
    mem.close()
    assert after == before
