"""A tenant's vector index as the sections of its file (persisted.py), and back.

Saving writes the persisted rows as they are mapped, with the CRC-32s they were written
with; loading maps the float32 vectors and the int8 codes and keeps the other columns in
memory (vectors.py checks a mapped row's CRC-32 when it first reads it).
"""

from __future__ import annotations

import numpy as np

from attestor_arango.store.embedded.indexfile import Section, crc32
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.embedded.vectors import TenantVectors


def vector_sections(index: TenantVectors) -> tuple[dict[str, Section], dict[str, object]]:
    """The index as arrays and header values.

    Persisted rows go out as they are mapped, with the CRC-32s they were written
    with (a row corrupt in the old file stays detectably corrupt in the new one),
    so saving again reads their bytes once and computes checksums of new rows only.
    """
    n, n0 = index.n, index.n0
    rows, ns_names = index.rows.sections()
    tail = index.matrix[: n - n0]
    tail_crc = np.fromiter((crc32(row) for row in tail), dtype=np.uint32, count=n - n0)
    arrays: dict[str, Section] = {
        **{f"r.{k}": v for k, v in rows.items()},
        "matrix": (index._base_matrix, tail) if n0 else tail,
        "row_crc": (index._base_crc, tail_crc) if n0 else tail_crc,
        "codes": (index._base_codes, index.codes[: n - n0]) if n0 else index.codes[:n],
        "scale": index.scale[:n],
        "err": index.err[:n],
        "rounding": index.rounding[:n],
        "size": index.size[:n],
    }
    return arrays, {"namespaces": ns_names, "rows": n, "dimension": index.dimension}


def vectors_from_sections(
    sections: dict[str, np.ndarray], meta: dict[str, object]
) -> TenantVectors:
    """An index over persisted arrays: codes and vectors mapped, the rest in memory."""
    dimension, names = meta["dimension"], meta["namespaces"]
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        raise ValueError("the persisted vector index's header has no valid dimension")
    if not isinstance(names, list):
        raise ValueError("the persisted vector index's header has no namespace list")
    index = TenantVectors(dimension, capacity=16)
    rows = RowTable.from_sections(sections, "r.", names)
    n = rows.n
    shapes = [sections[k].shape for k in ("matrix", "codes")]
    small = [sections[k].shape for k in ("row_crc", "scale", "err", "rounding", "size")]
    if shapes != [(n, dimension)] * 2 or small != [(n,)] * 5:
        raise ValueError("the persisted vector index's columns disagree in shape")
    index.rows, index.n0 = rows, n
    index._base_matrix, index._base_codes = sections["matrix"], sections["codes"]
    index._base_crc, index._checked = sections["row_crc"], np.zeros(n, dtype=bool)
    capacity = rows.capacity
    index.matrix = np.zeros((capacity - n, dimension), dtype=np.float32)
    index.codes = np.zeros((capacity - n, dimension), dtype=np.int8)
    for name in ("scale", "err", "rounding", "size"):
        column = np.zeros(capacity, dtype=getattr(index, name).dtype)
        column[:n] = sections[name]
        setattr(index, name, column)
    index.scale32 = np.zeros(capacity, dtype=np.float32)
    index._measure()
    return index
