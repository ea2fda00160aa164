"""Shared fixtures: injected clock and ids, stores per backend, AgentMemory instances.

``STORE_FACTORIES`` maps a backend name to a factory; the contract suite and the
AgentMemory tests run once per entry. A factory for a backend that cannot run
here calls ``pytest.skip`` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import Store

START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _own_data_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own ``$XDG_DATA_HOME``: what the library keeps by default beside
    the default store (the store itself, a trace file written without a path, which a
    purge rewrites) never reaches the real home directory of whoever runs the tests."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))


def _embedded(tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    return SQLiteStore(tmp_path / "memory.db")


def _arangodb(tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    """A fresh database on ARANGO_URL or a testcontainers server; skips saying why not."""
    from tests.support.arango_server import fresh_store, session_server

    store, drop = fresh_store(session_server(request.config))
    request.addfinalizer(drop)
    return store


STORE_FACTORIES: dict[str, Callable[[Path, pytest.FixtureRequest], Store]] = {
    "embedded": _embedded,
    "arangodb": _arangodb,
}
BACKENDS = list(STORE_FACTORIES)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = STORE_FACTORIES[request.param](tmp_path, request)
    yield s
    s.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
def mem(tmp_path: Path, clock: ManualClock) -> Iterator[AgentMemory]:
    """AgentMemory on the embedded store with a deterministic clock, ids and embedder."""
    m = AgentMemory(
        tmp_path / "mem.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(7)
    )
    yield m
    m.close()


@pytest.fixture(params=BACKENDS)
def any_mem(
    request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock
) -> Iterator[AgentMemory]:
    """AgentMemory on every backend the machine can run."""
    s = STORE_FACTORIES[request.param](tmp_path, request)
    m = AgentMemory(store=s, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(7))
    yield m
    m.close()
