"""BLAS threads: one per process by default.

Every BLAS product attestor-arango runs is small: MMR, freshness and exact
cosine over a hundred candidates, or one of the ~50 chunks of a vector scan.
OpenBLAS would wake its own threads for each call: for products this small that
costs more than it saves, and on a busy machine its spinning threads stalled a
chunked scan from 7 ms to hundreds (measured on two cores).

threadpoolctl's limits are process-wide and can only be set from one thread at
a time, so a limit set and restored around every recall would silently do
nothing in a server's worker threads. A process-wide setting belongs to whoever
owns the process: the CLI and the servers it starts call ``limit_blas_threads()``
once (``open_memory``), and a program embedding the library calls it itself if
it wants the same; the library never changes it behind a host program's back.
``ATTESTOR_BLAS_THREADS`` chooses another count (``0`` leaves BLAS alone).
"""

from __future__ import annotations

import os
import threading

import numpy as np  # noqa: F401  (loads the BLAS library the controller must see)
from threadpoolctl import ThreadpoolController

from attestor_arango.errors import ValidationError

ENV = "ATTESTOR_BLAS_THREADS"
_LOCK = threading.Lock()
_done = False


def _wanted() -> int:
    raw = os.environ.get(ENV, "1").strip()
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValidationError(
            f"{ENV} must be a whole number >= 0 (0 leaves BLAS alone), not {raw!r}"
        )
    return value


def limit_blas_threads() -> None:
    """Sets the process's BLAS thread count once (see the module docstring)."""
    global _done
    if _done:
        return
    with _LOCK:
        if not _done:
            wanted = _wanted()
            if wanted:
                ThreadpoolController().limit(limits=wanted, user_api="blas")
            _done = True


def blas_threads() -> list[int]:
    """The thread count of every BLAS library loaded (for tests)."""
    infos = ThreadpoolController().info()
    return [int(info["num_threads"]) for info in infos if info["user_api"] == "blas"]
