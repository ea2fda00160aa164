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
The configuration's ``blas_threads`` (``ATTESTOR_BLAS_THREADS``) chooses another count
(``0`` leaves BLAS alone).
"""

from __future__ import annotations

import threading

import numpy as np  # noqa: F401  (loads the BLAS library the controller must see)
from threadpoolctl import ThreadpoolController

from attestor_arango.errors import ValidationError

_LOCK = threading.Lock()
_done = False


def limit_blas_threads(threads: int = 1) -> None:
    """Sets the process's BLAS thread count once (``0`` leaves BLAS alone).

    The CLI passes the configuration's ``blas_threads`` (``ATTESTOR_BLAS_THREADS``).
    Raises ``ValidationError`` for a negative count.
    """
    global _done
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValidationError(f"blas_threads must be a whole number >= 0, not {threads!r}")
    if _done:
        return
    with _LOCK:
        if not _done:
            if threads:
                ThreadpoolController().limit(limits=threads, user_api="blas")
            _done = True


def blas_threads() -> list[int]:
    """The thread count of every BLAS library loaded (for tests)."""
    infos = ThreadpoolController().info()
    return [int(info["num_threads"]) for info in infos if info["user_api"] == "blas"]
