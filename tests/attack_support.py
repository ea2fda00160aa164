"""Helpers for the adversarial input tests: a seeded memory behind REST and MCP, and the
stored state as bytes, so a refused request can be shown to have changed nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="inbox")
OTHER = AgentContext(agent_id="orch", role="orchestrator", tenant="beta", namespace="inbox")
AUTH = {"Authorization": "Bearer secret"}
AUDIT_TABLES = frozenset({"audit", "audit_heads"})


def seeded(path: Path) -> tuple[AgentMemory, str, str]:
    """A store with a fact in tenant acme and one in tenant beta; returns both ids."""
    mem = AgentMemory(path, embedder=HashingEmbedder(64))
    ours = mem.add("Ann likes green tea", entity="ann", category="drink", context=CTX).id
    theirs = mem.add("Bob likes coffee", entity="bob", category="drink", context=OTHER).id
    return mem, ours, theirs


def acme_ring() -> KeyRing:
    """One orchestrator key ("secret") for tenant acme."""
    key = ApiKey(
        id="k",
        sha256=hash_key("secret"),
        tenant="acme",
        roles=("orchestrator",),
        agent_ids=("orch",),
    )
    return KeyRing([key])


def stored(mem: AgentMemory, *, with_audit: bool = True) -> bytes:
    """Every row of every table of the embedded store, in a fixed order, as bytes.

    ``with_audit=False`` leaves out the audit chain: a refused *permission* is audited
    once on purpose (a denied call is evidence), while a refused *argument* writes nothing.
    """
    db = sqlite3.connect(Path(mem.store.path))  # type: ignore[attr-defined]
    try:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        out = []
        for name in sorted(names):
            if not with_audit and name in AUDIT_TABLES:
                continue
            rows = db.execute(f'SELECT * FROM "{name}"').fetchall()
            out.append(f"{name}: {sorted(map(repr, rows))}")
        return "\n".join(out).encode("utf-8")
    finally:
        db.close()


Refusal = tuple[ValidationError, list[httpx.Request]]  # the error raised, the requests sent


def client_refusal(call: Callable[[MemoryClient], Any]) -> Refusal:
    """What ``call`` raised on a ``MemoryClient`` whose server records every request it is
    sent (and answers each with a 500): a refusal the client made itself leaves it empty."""
    sent: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500, json={"code": "attestor_error", "message": "reached"})

    client = MemoryClient("http://memory", "key", transport=httpx.MockTransport(server))
    with client, pytest.raises(ValidationError) as refused:
        call(client)
    return refused.value, sent
