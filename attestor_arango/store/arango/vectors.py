"""Re-embedding on ArangoDB: the tenant's vectors swapped in bounded steps.

``Store.replace_vectors`` must look atomic to readers, but one stream transaction cannot
carry a large tenant: ArangoDB holds a stream transaction's writes in memory and refuses it
above ``--transaction.streaming-max-transaction-size`` (512 MiB from 3.12.4, 128 MiB
before; per DB-Server in a cluster), drops it after an idle gap of 60 s
(``--transaction.streaming-idle-timeout``, at most 120 s), and while it runs every row it
updated conflicts (1200) with other writers (docs-hugo 3.12 develop/transactions/
stream-transactions.md, limitations.md, locking-and-isolation.md; release-notes
whats-new-in-3-12.md "Adjustable Stream Transaction size"). Each updated row is rewritten
whole (at 384 dimensions its vector alone is about 3.5 KB as VelocyPack doubles, plus its
text), so one transaction over a whole tenant stopped fitting at around a hundred thousand
memories.

So the swap runs in four steps, each transaction small:

1. **stage** (``aql/vector_stage.aql``), in batches of ``reembed_batch_rows`` rows: each
   row gets its new vector beside the old one, ``vector_next = {space, vector}``. Readers
   still read ``vector``, all in the old space. A batch that matches fewer rows than it
   lists is a ``ConflictError`` (a row was deleted meanwhile): nothing readers see changed.
2. **flip** (``aql/vector_flip.aql``), once, one small write: only if every row with a
   vector has one staged for the new space, and there are as many as were given, the
   tenant's space becomes the new one, marked ``moving``. Otherwise ``ConflictError``
   (rows were written meanwhile by a process on the old embedder) and nothing changed:
   core/reembed.py embeds the newcomers and calls again; staging is idempotent.
3. **move** (``aql/vector_move.aql``), in batches: ``vector`` takes the staged vector.
   While the space is ``moving`` the exact scan and ``get_vectors`` read the staged
   vector first (the mark is read inside the same query, in the same snapshot), so every
   read ranks in the new space, and the ANN path is not used (``plan_vector_search``).
4. **settle** (``aql/vector_settle.aql``): once no staged vector is left the mark goes.

A crash before the flip leaves the tenant on the old space (staged vectors are unused
bytes, dropped by a purge and overwritten by the next run); a crash after it leaves the
tenant in the new space, correct but on the exact scan, and the next ``reembed`` (or
``replace_vectors`` again) finishes steps 3-4 (``finish_vector_move``).

The vector index covers ``vector`` with one dimension, and ArangoDB refuses a document
whose vector has another length ("input vector of N dimension does not have the correct
dimension of M", error 10: arangod RocksDBEngine/RocksDBVectorIndex.cpp, ``insert``), so a
move to another dimension is refused up front while an index exists (step 3 could not
finish otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from attestor_arango.errors import ConflictError, ValidationError
from attestor_arango.scope import Scope
from attestor_arango.store.arango.base import ArangoBase
from attestor_arango.store.arango.docs import vector_to_list
from attestor_arango.store.arango.planning import drain_in_batches, reembed_batch_rows
from attestor_arango.store.codec import replacement_batches
from attestor_arango.store.protocol import EmbeddingSpace, VectorBatch, iter_chunks

SETTLE_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class SpaceState:
    """A tenant's recorded space and, during a re-embedding's steps 3-4, the space it left."""

    space: EmbeddingSpace
    moving: bool = False
    moving_from: EmbeddingSpace | None = None


def space_key(space: EmbeddingSpace) -> str:
    """How a staged vector names its space (core/reembed.py's staging key too)."""
    return f"{space.name}/{space.dimension}"


def _space(row: Any) -> EmbeddingSpace | None:
    if not isinstance(row, dict) or row.get("name") is None:
        return None
    return EmbeddingSpace(str(row["name"]), int(row["dimension"]))


class VectorMoves(ArangoBase):
    """The tenant's embedding space and the bounded re-embedding swap (module docstring)."""

    def space_state(self, scope: Scope) -> SpaceState | None:
        """The tenant's recorded space, or None before its first vector."""
        rows = self._run("space_get", scope.tenant_wide(), {})
        space = _space(rows[0]) if rows else None
        if space is None:
            return None
        row = rows[0]
        return SpaceState(space, bool(row.get("moving")), _space(row.get("moving_from")))

    def replace_vectors(
        self, scope: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]
    ) -> int:
        """Moves the tenant to ``space`` in bounded steps (module docstring), reading
        ``batches`` one at a time as it stages them; returns how many vectors it holds in
        ``space``. Raises ``ValidationError`` (nothing readers see changed) for a vector
        that does not fit ``space`` or a dimension the vector index cannot hold (the latter
        before anything is staged), and ``ConflictError`` (likewise) unless the batches
        cover exactly the tenant's vector-bearing memories, once each; ``StoreError`` when
        the server fails a step (run it again: it resumes)."""
        tenant = scope.tenant_wide()
        self._check_index_dimension(space)
        state = self.space_state(tenant)
        if state is not None and state.moving and state.space != space:
            self._move_and_settle(tenant, state.space)  # an earlier move, finished first
            state = self.space_state(tenant)
        if state is None or not (state.moving and state.space == space):
            staged = self._stage(tenant, space, batches)
            self._flip(tenant, space, staged)
        self._move_and_settle(tenant, space)
        rows = self._run("memory_vector_count", tenant, {})
        return int(rows[0]["n"]) if rows else 0

    def finish_vector_move(self, scope: Scope) -> EmbeddingSpace | None:
        """Finishes a re-embedding that stopped after its flip (steps 3-4); returns the
        space the tenant moved from, or None when no move was pending. Raises
        ``StoreError`` when the server fails a step (run it again)."""
        tenant = scope.tenant_wide()
        state = self.space_state(tenant)
        if state is None or not state.moving:
            return None
        self._move_and_settle(tenant, state.space)
        return state.moving_from

    # the steps -------------------------------------------------------------------------------
    def batch_rows(self, space: EmbeddingSpace) -> int:
        return reembed_batch_rows(
            space.dimension, max_rows=self.reembed_batch, max_bytes=self.reembed_batch_bytes
        )

    def _check_index_dimension(self, space: EmbeddingSpace) -> None:
        index = self.vector_index(refresh=True)
        if index.get("exists") and index.get("dimension") not in (None, space.dimension):
            raise ValidationError(
                f"the vector index holds dimension {index.get('dimension')} and "
                f"{space.name} embeds with {space.dimension}; ArangoDB refuses vectors of "
                "another dimension while the index exists, and one database serves one "
                "dimension: re-embed into a database of its own (or drop the index when "
                "every tenant moves), nothing was changed"
            )

    def _stage(self, tenant: Scope, space: EmbeddingSpace, batches: Iterable[VectorBatch]) -> int:
        """Step 1 over each given batch in turn (a given batch larger than the server's
        bound is staged in several transactions); returns how many vectors it staged."""
        key = space_key(space)
        staged = 0
        for vectors in replacement_batches(batches, space):
            for chunk in iter_chunks(list(vectors), self.batch_rows(space)):
                items = [{"id": mid, "vector": vector_to_list(vectors[mid])} for mid in chunk]
                with self.transaction():
                    rows = self._run("vector_stage", tenant, {"items": items, "space": key})
                if len(rows) != len(items):
                    raise ConflictError(
                        f"tenant {tenant.tenant!r}: {len(items) - len(rows)} of {len(items)} "
                        "memories to re-embed have no vector any more; rows changed "
                        "meanwhile, run reembed again"
                    )
                staged += len(items)
        return staged

    def _flip(self, tenant: Scope, space: EmbeddingSpace, count: int) -> None:
        with self.transaction():
            flipped = self._run(
                "vector_flip",
                tenant,
                {
                    "space": space_key(space),
                    "name": space.name,
                    "dimension": space.dimension,
                    "count": count,
                },
            )
        if not flipped:
            raise ConflictError(
                f"tenant {tenant.tenant!r} holds vectors not staged for {space.name} (rows "
                f"written meanwhile) or not exactly the {count} given; nothing was switched, "
                "run reembed again"
            )

    def _move_and_settle(self, tenant: Scope, space: EmbeddingSpace) -> None:
        batch = self.batch_rows(space)
        key = space_key(space)

        def one_batch() -> int:
            with self.transaction():
                moved = self._run("vector_move", tenant, {"space": key, "batch": batch})
            return len(moved)

        for _ in range(SETTLE_ATTEMPTS):
            drain_in_batches(one_batch, batch)
            with self.transaction():
                settled = self._run(
                    "vector_settle", tenant, {"name": space.name, "dimension": space.dimension}
                )
            if settled:
                return
        raise ConflictError(
            f"tenant {tenant.tenant!r}: staged vectors were still left after "
            f"{SETTLE_ATTEMPTS} passes (another re-embedding runs?); run reembed again"
        )
