"""Whether a query vector may be scored against a tenant's stored vectors.

Vectors of two embedders live in two unrelated spaces: a cosine between them is
noise, even when the dimensions happen to agree. Writes already refuse to mix
spaces; recall uses :func:`space_mismatch` to run text-only instead, and names the
problem and its fix in ``errors``.
"""

from __future__ import annotations

from attestor_arango.embeddings import Embedder
from attestor_arango.embeddings.base import fallback_reason
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import MemoryStore

REEMBED_HINT = (
    "run `attestor-arango reembed` (AgentMemory.reembed()) to move the tenant to the "
    "current embedder, or configure the embedder it was filled with"
)


def space_mismatch(store: MemoryStore, scope: Scope, embedder: Embedder) -> str | None:
    """None when the tenant has no vectors yet or they are the embedder's; else why not."""
    space = store.get_embedding_space(scope)
    if space is None or (space.name, space.dimension) == (embedder.name, embedder.dimension):
        return None
    return (
        f"the tenant's vectors are {space.name} ({space.dimension}-d) but the embedder is "
        f"{embedder.name} ({embedder.dimension}-d); recall ran on the text lanes only. "
        + REEMBED_HINT
    )


def embedder_warnings(store: MemoryStore, scope: Scope, embedder: Embedder) -> dict[str, str]:
    """The ``errors`` entries a recall starts with: a hashing fallback, a space mismatch."""
    out: dict[str, str] = {}
    reason = fallback_reason(embedder)
    if reason is not None:
        out["embedder"] = reason
    mismatch = space_mismatch(store, scope, embedder)
    if mismatch is not None:
        out["embedding_space"] = mismatch
    return out
