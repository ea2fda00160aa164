"""A call whose caller stopped waiting: a flag the REST layer raises on its timeout.

The service runs each call in a worker thread and answers 504 when it takes too long;
the thread cannot be killed, so without this a batch that timed out (5000 turns) went
on and committed while the client had been told it failed. The writer reads the flag
before each write and before a batch commits (``core/writes.py``): once it is raised,
the call stops with ``CallCancelled`` and its transaction rolls back, so the caller
sees either success or nothing stored. Outside a cancellable call the flag is absent
and nothing is checked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from attestor_arango.errors import CallCancelled

_FLAG: ContextVar[threading.Event | None] = ContextVar("attestor_cancel", default=None)


@contextmanager
def cancellable(flag: threading.Event) -> Iterator[None]:
    """Runs the block with ``flag`` as the current call's cancel flag (this thread)."""
    token = _FLAG.set(flag)
    try:
        yield
    finally:
        _FLAG.reset(token)


def check_cancelled(what: str) -> None:
    """Raises ``CallCancelled`` when the current call's caller gave up on it."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise CallCancelled(
            f"{what} stopped before it was stored: the request timed out, and nothing of it "
            "was stored; retry with less per request (fewer turns per call)"
        )
