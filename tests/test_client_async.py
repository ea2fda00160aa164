"""AsyncMemoryClient: the same methods as coroutines, against a real uvicorn server."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest
from interface_support import keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import AccessDenied, NotFoundError, ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.async_client import AsyncMemoryClient
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

REMOTE = [m for m in spec.public_methods(AgentMemory) if m not in spec.LOCAL_ONLY]


@pytest.mark.parametrize("name", REMOTE)
def test_async_client_mirrors_the_sync_signature(name: str) -> None:
    method = getattr(AsyncMemoryClient("http://127.0.0.1:1"), name)
    assert inspect.iscoroutinefunction(method)
    sync = list(inspect.signature(getattr(MemoryClient, name)).parameters)[1:]
    assert list(inspect.signature(method).parameters) == sync


def test_unknown_attributes_still_fail() -> None:
    with pytest.raises(AttributeError):
        _ = AsyncMemoryClient("http://127.0.0.1:1").no_such_method


async def _scenario(url: str, plain: dict[str, str]) -> None:
    async with AsyncMemoryClient(url, plain["acme-executor"]) as c:
        written = await asyncio.gather(
            *(c.add(f"fact number {i}", entity=f"e{i}", category="n") for i in range(20))
        )
        assert len({m.id for m in written}) == 20
        assert (await c.get(written[3].id)).content == "fact number 3"
        assert (await c.stats()).active == 20
        assert len((await c.recall("fact number 7")).results) >= 1
        with pytest.raises(NotFoundError):
            await c.get("missing")
        with pytest.raises(ValidationError):
            await c.add("")
        with pytest.raises(AccessDenied):
            await c.forget(written[0].id)  # executors cannot forget


def test_async_round_trip(tmp_path: Path) -> None:
    memory = AgentMemory(
        tmp_path / "a.db", embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(5)
    )
    ring, plain = keyring()
    with running_server(memory, ring) as url:
        asyncio.run(_scenario(url, plain))
    memory.close()
