"""Recall traces: one JSONL event per pipeline step, off by default.

An event carries the recall id (a keyed hash of the inputs, so the same recall
in one store always has the same id), a monotonic sequence number, the step name, how many
candidates went in and came out, the step's duration and any lane error (its type; its
message, which may quote the query, only with ``include_content``). Query text and memory
content are left out unless ``include_content`` is set: a trace file must not become a
second, unaudited copy of the memory.

Layout: each tenant has its own file, ``<path>.tenants/<digest>.jsonl`` beside the
configured ``trace.path``, where ``<digest>`` is the first 32 hex digits of the SHA-256 of
the tenant id's UTF-8 bytes (``tenant_file``): a fixed-length name of hex digits whatever
the id holds (``/``, ``..``, any character, any length), so no id names a file outside
the folder. A tenant's recalls therefore never rotate, rewrite or lengthen the lookup of
another tenant's events. ``trace.path`` itself is the file earlier versions shared
between all tenants: it is no longer written, but a recorded recall is still looked up
in it (``tenant_generations``) and an erasure still rewrites it without the tenant's
events (every event names its tenant; atomic replace under the tracer's lock).

Each tenant's file is bounded on its own: an event that would take it past ``max_bytes``
first rotates it (``<file>`` to ``<file>.1``, ``.1`` to ``.2`` ... up to ``keep`` files,
the oldest dropped), so a tenant holds at most ``(keep + 1) * max_bytes`` bytes of traces
(an event larger than the bound alone gets a file of its own) and a service at most that
much per tenant that recalled. ``erase_tenant`` deletes every file of the tenant.

A tenant's file holds its queries, so it is never written through a link: the folder and
the file are opened without following one (``open_folder``, ``open_append``), the file
made exclusively with the store's permission bits; a link, FIFO or another user's file
at its name is replaced by a new file (a logged warning), an existing file of ours gets
the store's bits. A file that cannot be written fails the recall, as it always has.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attestor_arango.config import TRACE_KEEP, TRACE_MAX_BYTES
from attestor_arango.errors import StoreError, TenantRequiredError, ValidationError
from attestor_arango.retrieval.trace_files import (
    MakeFile,
    TraceErasure,
    append,
    delete_all,
    drop_stale_copies,
    erase_in,
    generations,
    open_append,
    open_folder,
    rotate,
    tenant_file,
)

if TYPE_CHECKING:
    from attestor_arango.retrieval.completion import Lane


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: the same value, the same bytes."""
    return _CANONICAL(value)


# ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` builds this very encoder on
# every call (any non-default argument does); made once, every recall id saves that
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def recall_id(
    tenant: str,
    namespace: str | None,
    query: str,
    as_of: int,
    window: tuple[int, int] | None,
    budget: int,
    config_json: str,
    key: bytes = b"",
) -> str:
    """Deterministic from the inputs: the same recall (and its replay) has the same id.

    ``config_json`` is ``canonical_json`` of the retrieval config, made once per
    config rather than per recall. The payload is the canonical JSON list of all
    inputs, the config last. ``key`` is the store's (``core/recall_key.py``): the id is
    the HMAC-SHA256 of the payload under it, so a reader of a trace file, which records
    every input but the query, cannot confirm a guessed query with the public code (the
    plain SHA-256 without a key: only this module's own tests).
    """
    span = list(window) if window else None
    head = canonical_json([tenant, namespace, query, as_of, span, budget])
    payload = f"{head[:-1]},{config_json}]".encode()
    # the one-shot ``hmac.digest`` (OpenSSL's): ~1.9 us a recall, ``hmac.new`` ~2.3 us
    digest = hmac.digest(key, payload, "sha256") if key else hashlib.sha256(payload).digest()
    return "rc_" + digest.hex()[:24]


class Tracer:
    """Appends each event to its tenant's file (``tenant_file``) of at most ``max_bytes``
    (rotated, ``keep`` older files kept); thread-safe; seq is monotonic per tracer. Raises
    ``ValidationError`` for an empty path or a bound that bounds nothing (``max_bytes`` < 1,
    ``keep`` < 0)."""

    def __init__(
        self,
        path: str | Path,
        *,
        include_content: bool = False,
        max_bytes: int = TRACE_MAX_BYTES,
        keep: int = TRACE_KEEP,
        make_file: MakeFile | None = None,
    ) -> None:
        if not str(path):
            raise ValidationError("trace.path is empty; set it to a file path or disable tracing")
        if max_bytes < 1 or keep < 0:
            raise ValidationError("trace.max_bytes must be at least 1 and trace.keep at least 0")
        self.path = Path(path).expanduser()
        self.include_content = include_content
        self.max_bytes = max_bytes
        self.keep = keep
        self.make_file = make_file  # None: files made by the umask (no store file to copy)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._made_bits: int | None = None  # ``_bits``, learnt on the first event
        self._bits_known = False

    def file_of(self, tenant: str) -> Path:
        """The file ``tenant``'s events are appended to (``tenant_file``)."""
        return tenant_file(self.path, tenant)

    def emit(self, event: dict[str, Any]) -> None:
        """Appends one event to the file of the tenant it names, rotating that file first
        when the event would take it past ``max_bytes``. Raises ``TenantRequiredError`` for
        an event naming no tenant (it would belong to no file an erasure removes) and
        ``StoreError`` when the file cannot be written (a bare ``OSError`` reached the
        caller of ``recall``, a 500 over REST, with nothing to act on)."""
        tenant = event.get("tenant")
        if not isinstance(tenant, str) or not tenant:
            raise TenantRequiredError("a recall-trace event must name its tenant")
        try:
            self._append(tenant, event)
        except OSError as exc:
            raise StoreError(
                f"the recall trace cannot be written ({exc.strerror or exc}); fix "
                "trace.path (its folder must be a writable directory) or turn tracing off, "
                "then recall again"
            ) from exc

    def _append(self, tenant: str, event: dict[str, Any]) -> None:
        """``emit``'s write; raises ``OSError`` when the file cannot be written."""
        file = self.file_of(tenant)
        with self._lock:
            record = {"seq": next(self._seq), **event}
            line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode("utf-8")
            bits = self._bits()
            # never through a link: the folder and the file opened without following one
            # (anything else at their names replaced, logged), made with the store's bits
            folder = open_folder(file.parent, private=bits is not None and not bits & 0o077)
            try:
                fd, size = open_append(folder, file, bits)
                try:
                    if size and size + len(line) > self.max_bytes:  # rotated first
                        os.close(fd)
                        fd = -1
                        rotate(file, self.keep)
                        fd, _ = open_append(folder, file, bits)
                    append(fd, line)
                finally:
                    if fd >= 0:
                        os.close(fd)
            finally:
                os.close(folder)

    def _bits(self) -> int | None:
        """The permission bits ``make_file`` gives a file (the store's), learnt once by
        making one beside the trace; None: the umask's (no ``make_file``, or no store file
        to copy). Called under the lock."""
        if not self._bits_known:
            self._bits_known = True
            if self.make_file is not None:
                probe = self.path.with_name(f".{self.path.name}.bits-{os.getpid()}")
                probe.unlink(missing_ok=True)
                try:
                    self.make_file(probe)  # O_EXCL: never through a link
                    self._made_bits = stat.S_IMODE(probe.lstat().st_mode)
                except FileNotFoundError:  # nothing made: no store file to copy bits from
                    pass
                finally:
                    probe.unlink(missing_ok=True)
        return self._made_bits

    def holds(self, tenant: str) -> bool:
        """Whether any file an erasure of ``tenant`` would clean exists: a generation of the
        shared file of earlier versions or of the tenant's own file."""
        try:
            files = generations(self.path) + generations(self.file_of(tenant))
            return any(file.is_file() for file in files)
        except OSError:  # unknown: an erasure is tried, and reports what failed
            return True

    def erase_tenant(self, tenant: str) -> TraceErasure:
        """Deletes every generation of ``tenant``'s own file (its events counted as
        removed), and rewrites every generation of the shared file of earlier versions
        without ``tenant``'s events (atomic replace, fsynced), after removing the copies a
        killed rewrite left (``drop_stale_copies``). Other tenants' files are not opened.

        An append by another process between the read and the replace is lost with the
        old file (one writer per trace file is the supported set-up). Never raises: a
        failed rewrite or delete is reported in ``TraceErasure.error`` with the events left.
        """
        report = TraceErasure()
        with self._lock:
            try:
                drop_stale_copies(self.path)
            except OSError as exc:
                report.error = f"removing a killed rewrite's copy failed: {exc.strerror or exc}"
                report.left = -1  # unknown: the copy could not be removed, nor read
                return report
            try:
                own, shared = generations(self.file_of(tenant)), generations(self.path)
            except OSError as exc:  # e.g. a name too long: nothing there could be read
                report.error = f"listing the trace files failed: {exc.strerror or exc}"
                report.left = -1
                return report
            delete_all(own, report)
            for file in shared:
                if report.error is not None:
                    break
                erase_in(file, tenant, report, self.make_file)
        return report


class RecallTrace:
    """The per-recall view of a tracer; a no-op when the tracer is None."""

    def __init__(self, tracer: Tracer | None, rid: str, tenant: str) -> None:
        self.tracer = tracer
        self.rid = rid
        self.tenant = tenant
        # off, nothing reads the clock: no event would carry a time
        self._t = 0.0 if tracer is None else time.perf_counter()

    @property
    def include_content(self) -> bool:
        return bool(self.tracer and self.tracer.include_content)

    @property
    def on(self) -> bool:
        """Whether events are written: what only an event reads (id lists, counts) is
        worth computing only then."""
        return self.tracer is not None

    def lap(self) -> float:
        """Milliseconds since the last step or lap, and the clock restarted: the time of a
        step whose event is written later (``step(..., ms=...)``); 0.0 when off, where no
        event is written (the lanes lap every recall: two clock reads and a ``round``)."""
        if self.tracer is None:
            return 0.0
        now = time.perf_counter()
        ms = round((now - self._t) * 1000, 3)
        self._t = now
        return ms

    def ids(self, lane: Lane) -> list[str] | None:
        """The memory ids of ``lane`` for an event, when events are written."""
        return None if self.tracer is None else list(lane.ids)

    def step(
        self,
        step: str,
        n_in: int,
        n_out: int,
        *,
        error: str | None = None,
        ms: float | None = None,
        **extra: Any,
    ) -> None:
        """Writes one event; its time is ``ms`` when given (see ``lap``), else the time
        since the last step or lap."""
        if self.tracer is None:  # off: nothing reads the clock
            return
        lapped = self.lap()
        event: dict[str, Any] = {
            "tenant": self.tenant,
            "recall_id": self.rid,
            "step": step,
            "candidates_in": n_in,
            "candidates_out": n_out,
            "ms": lapped if ms is None else ms,
        }
        if error is not None:  # its message may quote the query (an embedder's refusal)
            event["error"] = error if self.tracer.include_content else withheld(error)
        event.update(extra)
        self.tracer.emit(event)


def withheld(error: str) -> str:
    """A lane error (``"Type: message"``) as a trace keeps it without ``include_content``:
    the type, the message's length only (the recall's ``errors`` still carry it whole)."""
    kind, sep, said = error.partition(": ")
    if not sep or not kind.isidentifier():
        kind, said = "error", error
    return f"{kind}: <message withheld, {len(said)} characters>"


def tracer_from_settings(settings: Any, make_file: MakeFile | None = None) -> Tracer | None:
    """Config.trace -> a Tracer making its files with ``make_file``, or None when tracing
    is off (the default)."""
    if settings is None or not getattr(settings, "enabled", False):
        return None
    path = getattr(settings, "path", None)
    if not path:
        raise ValidationError(
            "trace.enabled is true but trace.path is not set; give a JSONL file path "
            "(or ATTESTOR_TRACE_PATH)"
        )
    return Tracer(
        path,
        include_content=bool(getattr(settings, "include_content", False)),
        max_bytes=int(getattr(settings, "max_bytes", TRACE_MAX_BYTES)),
        keep=int(getattr(settings, "keep", TRACE_KEEP)),
        make_file=make_file,
    )


_SHARED: dict[tuple[str, bool, int, int], Tracer] = {}
_SHARED_LOCK = threading.Lock()


def erase_tenant(
    settings: Any, tenant: str, make_file: MakeFile | None = None
) -> TraceErasure | None:
    """``tenant``'s events out of the configured trace (``Tracer.erase_tenant``: its own
    files deleted, the shared file of earlier versions rewritten); None when no such file
    exists.

    With tracing off, the files tracing wrote to when it was on (``written_path``: the path
    still set, else the default one) are erased too when they exist: the events written
    while tracing was on stay there after it is switched off.
    """
    tracer = shared_tracer(settings, make_file)
    if tracer is None:
        written = getattr(settings, "written_path", None)
        path = written() if callable(written) else getattr(settings, "path", None)
        if not path:
            return None
        tracer = Tracer(path, make_file=make_file)
        if not tracer.holds(tenant):
            return None
    return tracer.erase_tenant(tenant)


def shared_tracer(settings: Any, make_file: MakeFile | None = None) -> Tracer | None:
    """Like ``tracer_from_settings`` but one Tracer per (path, include_content, bounds) per
    process, so ``seq`` stays monotonic across recalls writing to the same file (and one
    lock guards its rotations). Its files are made by the first ``make_file`` given: the
    stores of one process tracing to one path share it."""
    if settings is None or not getattr(settings, "enabled", False):
        return None
    fresh = tracer_from_settings(settings, make_file)
    if fresh is None:
        return None
    key = (str(fresh.path), fresh.include_content, fresh.max_bytes, fresh.keep)
    with _SHARED_LOCK:
        tracer = _SHARED.setdefault(key, fresh)
        if tracer.make_file is None and make_file is not None:
            with tracer._lock:
                tracer.make_file = make_file
                tracer._bits_known = False  # learnt again, from this one
        return tracer
