"""A call whose caller stopped waiting: a flag the REST layer raises on its timeout.

The service runs each call in a worker thread and answers 504 when it takes too long;
the thread cannot be killed, so without this a batch that timed out (5000 turns) went
on and committed while the client had been told it failed. The store checks the flag
once, where every write passes: right before its outermost transaction commits
(``commit_point``, called by each backend's ``transaction()``). Once the flag is raised
the commit does not happen: the call stops with ``CallCancelled`` and its transaction
rolls back, so the caller sees either success or nothing stored, whatever route wrote.

The other half is the race with the timeout. A call passes the commit point and is
committing (or has committed one of several transactions: a consolidation commits per
episode) when the timeout fires: it can no longer be "nothing stored", so the flag
refuses to rise (``CallFlag.cancel`` says so) and the service waits for the call's own
answer instead of reporting a cancellation that did not happen. ``check_cancelled`` is
an early stop for long batches (the writer asks before each write, so a 5000-turn call
stops at its next turn instead of embedding the rest); it never replaces the commit point.
Outside a cancellable call there is no flag and nothing is checked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from attestor_arango.errors import CallCancelled


class CallFlag:
    """One call's cancel state, shared by the service (raises it) and the worker thread
    (commits). Its lock orders the two: the flag rises before the call's first commit
    point, then every commit of the call is refused, or after it, and never rises."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._committing = False
        self._timed_out = threading.Event()

    def cancel(self) -> bool:
        """The caller stopped waiting: raises the flag unless the call already began a
        commit. Returns whether it rose, i.e. whether the call will store nothing."""
        with self._lock:
            self._timed_out.set()
            if not self._committing:
                self._cancelled = True
            return self._cancelled

    @property
    def cancelled(self) -> bool:
        """Whether the flag rose (nothing of the call is, or will be, stored)."""
        return self._cancelled

    @property
    def timed_out(self) -> threading.Event:
        """Set when the caller stopped waiting, whether or not the flag could rise (for a
        worker, or a test, that waits for the timeout)."""
        return self._timed_out

    def commit_point(self, what: str, *, writes: bool = True) -> None:
        """Called right before a transaction commits; raises ``CallCancelled`` when the
        flag rose, and otherwise marks the call as committing, so it cannot rise after.
        ``writes=False`` (the backend knows the transaction changed nothing: a read under
        the write lock) commits nothing, so the call stays cancellable."""
        with self._lock:
            if self._cancelled:
                raise _cancelled(what)
            self._committing = self._committing or writes


_FLAG: ContextVar[CallFlag | None] = ContextVar("attestor_cancel", default=None)


def _cancelled(what: str) -> CallCancelled:
    return CallCancelled(
        f"{what} stopped before it was stored: the request timed out, and nothing of it "
        "was stored; retry it, with less per request when it carries many items (fewer "
        "turns per call)"
    )


@contextmanager
def cancellable(flag: CallFlag) -> Iterator[None]:
    """Runs the block with ``flag`` as the current call's cancel flag (this thread)."""
    token = _FLAG.set(flag)
    try:
        yield
    finally:
        _FLAG.reset(token)


def current() -> CallFlag | None:
    """The current call's flag; ``None`` outside a cancellable call."""
    return _FLAG.get()


def check_cancelled(what: str) -> None:
    """Raises ``CallCancelled`` when the current call's flag rose (so nothing of it is
    stored yet): an early stop; the guarantee is ``commit_point``."""
    flag = _FLAG.get()
    if flag is not None and flag.cancelled:
        raise _cancelled(what)


def commit_point(what: str = "the write", *, writes: bool = True) -> None:
    """The store's last step before a transaction commits (see ``CallFlag.commit_point``);
    raises ``CallCancelled``, and the caller rolls the transaction back. Outside a
    cancellable call it does nothing."""
    flag = _FLAG.get()
    if flag is not None:
        flag.commit_point(what, writes=writes)
