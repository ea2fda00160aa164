"""Session 20 attack battery: a write whose tenant was purged while it embedded was refused
as an embedder mismatch.

A write reads its tenant's embedding space, embeds outside the write lock, then checks
in its transaction that the space is still the one it embedded in (a re-embedding may
have switched it). A purge of the tenant in between removed the space, and the check
answered ``EmbeddingMismatchError`` (409): "holds no vectors but this memory embeds with
...; configure the same embedder, or ... reembed", advice for a problem the tenant did
not have, to a caller whose fact was not stored. A space that is gone (the tenant holds
no vectors any more) is now recorded by the write, as for the tenant's first write; a
space switched to another embedder is still refused.

The purge runs inside the embedder's call, i.e. exactly between the write's read of the
space and its transaction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import EmbeddingMismatchError
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import EmbeddingSpace

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
RACING = "Ann moved to Oslo"


class RacingEmbedder(HashingEmbedder):
    """Runs ``during`` when it embeds ``RACING``: another caller's work landing then."""

    during = staticmethod(lambda: None)

    def embed(self, texts: list[str]) -> np.ndarray:
        if RACING in texts:
            self.during()
        return super().embed(texts)


def test_a_write_racing_its_tenants_purge_is_stored_in_a_fresh_space(tmp_path: Path) -> None:
    embedder = RacingEmbedder(64)
    mem = AgentMemory(tmp_path / "m.db", embedder=embedder)
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    purged = []
    embedder.during = lambda: purged.append(mem.purge_user("acme", "erasure #1", context=CTX))

    stored = mem.add(RACING, entity="ann", category="home", context=CTX)

    assert purged and purged[0].ok
    assert [m.content for m in mem.list(context=CTX)] == [RACING]
    space = mem.store.get_embedding_space(Scope("acme"))
    assert space == EmbeddingSpace(embedder.name, embedder.dimension)
    assert [r.memory.id for r in mem.recall("Oslo", context=CTX).results] == [stored.id]
    mem.close()


def test_a_space_switched_meanwhile_is_still_refused(tmp_path: Path) -> None:
    embedder = RacingEmbedder(64)
    mem = AgentMemory(tmp_path / "m.db", embedder=embedder)
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    other = EmbeddingSpace("another-model", 64)
    embedder.during = lambda: mem.store.set_embedding_space(Scope("acme"), other)

    with pytest.raises(EmbeddingMismatchError, match="another-model"):
        mem.add(RACING, entity="ann", category="home", context=CTX)
    assert [m.content for m in mem.list(context=CTX)] == ["Ann lives in Rome"]
    mem.close()
