"""One BLAS thread while a recall runs.

Recall multiplies small matrices (MMR, freshness, exact cosine) and scans the
vector index in threads of its own. OpenBLAS would start its own threads for
each product: for matrices this small that costs more than it saves, and on a
busy machine its spinning threads stall the caller for milliseconds. The limit
is process-wide while it holds (threadpoolctl has no per-thread limit) and is
restored on exit.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController

_CONTROLLER = ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    return _CONTROLLER.limit(limits=1, user_api="blas")
