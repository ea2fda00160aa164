"""Decisions the ArangoDB store makes before it sends a query (pure, unit-tested).

Kept apart from the I/O so the rules can be read and tested on their own:
which vector path serves a tenant, which errors are worth a retry, and how a temporal
view becomes bind values that compare exactly on the server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from arango import errno

from attestor_arango.clock import OPEN
from attestor_arango.scope import TemporalView

# ArangoDB's error numbers as python-arango names them (arango/errno.py)
VECTOR_SEARCH_NOT_APPLIED = errno.QUERY_VECTOR_SEARCH_NOT_APPLIED  # 1554: no usable index/shape
FUNCTION_NAME_UNKNOWN = errno.QUERY_FUNCTION_NAME_UNKNOWN  # 1540: no APPROX_NEAR_* on this server
# 1555 ERROR_QUERY_VECTOR_INDEX_NOT_READY (3.12.9+, docs-hugo 3.12 release-notes
# api-changes-in-3-12.md, "Vector indexes"): the query reached an index still training, e.g.
# one created in the background while the cached index state said ready. python-arango
# 8.3.x's errno has no name for it.
VECTOR_INDEX_NOT_READY = 1555
UNIQUE_CONSTRAINT_VIOLATED = errno.UNIQUE_CONSTRAINT_VIOLATED  # 1210
WRITE_WRITE_CONFLICT = errno.CONFLICT  # 1200
VALIDATION_FAILED = errno.VALIDATION_FAILED  # 1620: collection JSON-Schema rule
# a write the account may not make (a read-only user: 11) or the server refuses (1004)
READ_ONLY_REFUSALS = frozenset({errno.FORBIDDEN, errno.READ_ONLY})
RETRYABLE_OUTSIDE_TRANSACTION = frozenset({UNIQUE_CONSTRAINT_VIOLATED, WRITE_WRITE_CONFLICT})
ANN_FALLBACK = frozenset({VECTOR_SEARCH_NOT_APPLIED, FUNCTION_NAME_UNKNOWN, VECTOR_INDEX_NOT_READY})


@dataclass(frozen=True, slots=True)
class VectorPlan:
    path: Literal["ann", "exact"]
    reason: str


def plan_vector_search(
    *,
    index: Mapping[str, Any],
    dimension: int,
    tenant_vectors: int,
    min_docs: int,
    in_transaction: bool,
    zero_query: bool = False,
    moving: bool = False,
) -> VectorPlan:
    """ANN only when an index is usable for this tenant; otherwise the exact scan.

    - while a re-embedding moves the tenant's staged vectors into place (its space is
      marked moving), the indexed attribute holds both spaces; only the exact scan, which
      reads each row's staged vector first, ranks in one space;
    - a zero query vector has no direction; the exact scan scores every row 0 (as the
      embedded backend's dot product does) instead of asking the cosine index;
    - inside a stream transaction the exact scan sees the transaction's own writes, which
      an index scan is not documented to do;
    - no index, an index not ``ready`` (3.12.9+ reports ``trainingState``) or one built for
      another dimension cannot answer;
    - a tenant with fewer than ``min_docs`` vectors is cheap to scan exactly, and filtered
      ANN on a small slice of a shared index can miss rows (it searches only the probed
      cells), so small tenants get exact answers.
    """
    if in_transaction:
        return VectorPlan("exact", "inside a transaction: the exact scan sees uncommitted writes")
    if moving:
        return VectorPlan("exact", "a re-embedding is moving this tenant's vectors into place")
    if zero_query:
        return VectorPlan("exact", "zero query vector: no direction for the cosine index")
    if not index.get("exists"):
        return VectorPlan("exact", "no vector index yet")
    state = index.get("training_state")
    if state not in (None, "ready"):
        return VectorPlan("exact", f"vector index is {state!r}, not ready")
    if index.get("dimension") != dimension:
        return VectorPlan(
            "exact", f"vector index dimension {index.get('dimension')} != query {dimension}"
        )
    if tenant_vectors < min_docs:
        return VectorPlan("exact", f"tenant has {tenant_vectors} vectors < {min_docs}")
    return VectorPlan("ann", "vector index ready and tenant large enough")


def probes_for(n_probe: int, index: Mapping[str, Any]) -> int:
    """Cells to probe: the configured number, never more than the index has (nLists)."""
    n_lists = index.get("n_lists")
    if isinstance(n_lists, int) and n_lists > 0:
        return max(1, min(n_probe, n_lists))
    return max(1, n_probe)


def ann_needs_fallback(error_code: int | None) -> bool:
    """Answer exactly when the server cannot run the ANN query at all.

    1554: the vector index is missing, untrained or not applicable to the query's shape.
    1555: the index is still training (3.12.9+; a rebuild in the background).
    1540: ``APPROX_NEAR_COSINE`` is an unknown function, i.e. the server runs without
    ``--vector-index`` (the doctor says so); ``COSINE_SIMILARITY`` needs no option.
    """
    return error_code in ANN_FALLBACK


def ann_result_short(returned: int, k: int) -> bool:
    """``LIMIT k`` does not guarantee k ANN rows (filtered cells); then scan exactly."""
    return returned < k


def should_retry(error_code: int | None, *, attempt: int, max_attempts: int, in_txn: bool) -> bool:
    """UPSERT races (1210) and write-write conflicts (1200) are retried outside transactions.

    Inside a stream transaction the snapshot is fixed, so a retry would see the same state;
    the conflict is raised and the caller retries the whole transaction.
    """
    return not in_txn and error_code in RETRYABLE_OUTSIDE_TRANSACTION and attempt + 1 < max_attempts


def drain_in_batches(step: Callable[[], int], batch: int) -> int:
    """Runs ``step`` (removing at most ``batch`` rows) until a batch comes back short.

    Each call commits on its own, so a purge of any size stays below the stream
    transaction's 512 MiB limit, and a purge that fails part-way resumes when re-run.
    Returns the total removed.
    """
    if batch < 1:
        raise ValueError("batch must be at least 1")
    total = 0
    while True:
        removed = step()
        total += removed
        if removed < batch:
            return total


# A double in VelocyPack: type byte 0x1b and 8 bytes (arangodb/velocypack, VelocyPack.md).
VPACK_DOUBLE_BYTES = 9


def reembed_batch_rows(dimension: int, *, max_rows: int, max_bytes: int) -> int:
    """Rows one re-embedding transaction may touch (``store/arango/vectors.py``): at most
    ``max_rows``, and few enough that the vectors those rows hold while staged (the
    current one and the staged one, as VelocyPack doubles) stay within ``max_bytes``.

    A stream transaction holds what it writes in memory until the commit and is refused
    above ``--transaction.streaming-max-transaction-size`` (512 MiB from 3.12.4, 128 MiB
    before; per DB-Server in a cluster; docs-hugo 3.12 develop/transactions/
    stream-transactions.md and release-notes whats-new-in-3-12.md). An update rewrites the
    whole document, so a row's content and metadata come on top of its vectors.
    """
    if max_rows < 1 or max_bytes < 1 or dimension < 1:
        raise ValueError("max_rows, max_bytes and dimension must be at least 1")
    per_row = 2 * VPACK_DOUBLE_BYTES * dimension
    return max(1, min(max_rows, max_bytes // per_row))


def view_binds(view: TemporalView) -> dict[str, int]:
    """The four bind values every temporal query takes, ready to spread into its binds.

    The open-ended window end (OPEN + 1) is not a double, so it becomes OPEN:
    ``valid_from < OPEN`` holds for every stored row exactly as ``< OPEN + 1``.
    """
    return {
        "as_of": view.as_of,
        "t_expired_after": view.t_expired_after,
        "window_start": view.window_start,
        "window_end": min(view.window_end, OPEN),
    }
