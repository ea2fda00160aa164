"""Recall traces: one JSONL event per pipeline step, off by default.

An event carries the recall id (a hash of the inputs, so the same recall
always has the same id), a monotonic sequence number, the step name, how many
candidates went in and came out, the step's duration and any lane error. Query
text and memory content are left out unless ``include_content`` is set: a trace
file must not become a second, unaudited copy of the memory.

Every event names its tenant, so ``erase_tenant`` (called by ``purge_user``) can
rewrite the file without the tenant's events: atomically (a new file replaces the
old one), under the tracer's lock, so no recall of this process interleaves.

The file is bounded: an event that would take it past ``max_bytes`` first rotates it
(``<path>`` to ``<path>.1``, ``.1`` to ``.2`` ... up to ``keep`` files, the oldest
dropped), so a long-running service holds at most ``(keep + 1) * max_bytes`` bytes of
traces (an event larger than the bound alone gets a file of its own). Erasure and the
lookup of a recorded recall read every generation (``generations``).
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attestor_arango.config import TRACE_KEEP, TRACE_MAX_BYTES
from attestor_arango.errors import ValidationError
from attestor_arango.store.protocol import Hit


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
) -> str:
    """Deterministic from the inputs: the same recall (and its replay) has the same id.

    ``config_json`` is ``canonical_json`` of the retrieval config, made once per
    config rather than per recall. The payload is the canonical JSON list of all
    inputs, the config last.
    """
    span = list(window) if window else None
    head = canonical_json([tenant, namespace, query, as_of, span, budget])
    payload = f"{head[:-1]},{config_json}]"
    return "rc_" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


@dataclass
class TraceErasure:
    """What ``Tracer.erase_tenant`` did: events removed, events it could not attribute to
    any tenant (written before events named one, or unreadable lines), and the tenant's
    events left because the rewrite failed (``error`` says why)."""

    removed: int = 0
    unattributed: int = 0
    left: int = 0
    error: str | None = None


class Tracer:
    """Appends events to a JSONL file of at most ``max_bytes`` (rotated, ``keep`` older
    files kept); thread-safe; seq is monotonic per tracer. Raises ``ValidationError`` for
    an empty path or a bound that bounds nothing (``max_bytes`` < 1, ``keep`` < 0)."""

    def __init__(
        self,
        path: str | Path,
        *,
        include_content: bool = False,
        max_bytes: int = TRACE_MAX_BYTES,
        keep: int = TRACE_KEEP,
    ) -> None:
        if not str(path):
            raise ValidationError("trace.path is empty; set it to a file path or disable tracing")
        if max_bytes < 1 or keep < 0:
            raise ValidationError("trace.max_bytes must be at least 1 and trace.keep at least 0")
        self.path = Path(path).expanduser()
        self.include_content = include_content
        self.max_bytes = max_bytes
        self.keep = keep
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def emit(self, event: dict[str, Any]) -> None:
        """Appends one event, rotating the file first when the event would take it past
        ``max_bytes``; raises ``OSError`` when the file cannot be written."""
        with self._lock:
            record = {"seq": next(self._seq), **event}
            line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode("utf-8")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._make_room(len(line))
            with self.path.open("ab") as fh:
                fh.write(line)

    def _make_room(self, adding: int) -> None:
        """Rotates the file (``_rotate``) when ``adding`` bytes would take a non-empty file
        past ``max_bytes``. Called under the lock."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size and size + adding > self.max_bytes:
            _rotate(self.path, self.keep)

    def erase_tenant(self, tenant: str) -> TraceErasure:
        """Rewrites every generation of the trace file (``generations``) without
        ``tenant``'s events (atomic replace, fsynced), after removing the copies a killed
        rewrite left (``_drop_stale_copies``).

        An append by another process between the read and the replace is lost with the
        old file (one writer per trace file is the supported set-up). Never raises: a
        failed rewrite is reported in ``TraceErasure.error`` with the events left.
        """
        report = TraceErasure()
        with self._lock:
            try:
                _drop_stale_copies(self.path)
            except OSError as exc:
                report.error = f"removing a killed rewrite's copy failed: {exc.strerror or exc}"
                report.left = -1  # unknown: the copy could not be removed, nor read
                return report
            for file in generations(self.path):
                _erase_in(file, tenant, report)
                if report.error is not None:
                    break
        return report


def _erase_in(file: Path, tenant: str, report: TraceErasure) -> None:
    """``tenant``'s events out of one trace file, counted into ``report``; a failure is
    recorded there (``error``, ``left``), never raised."""
    try:
        lines = file.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return
    except OSError as exc:
        report.error = f"reading the trace file {file.name} failed: {exc.strerror or exc}"
        report.left = -1  # unknown: the file could not be read
        return
    kept: list[bytes] = []
    removed = 0
    for line in lines:
        owner = _tenant_of(line)
        if owner == tenant:
            removed += 1
            continue
        if owner is None and line.strip():
            report.unattributed += 1
        kept.append(line)
    if not removed:
        return
    try:
        _replace(file, kept)
    except OSError as exc:
        report.error = f"rewriting the trace file {file.name} failed: {exc.strerror or exc}"
        report.left = removed
        return
    report.removed += removed


def _rotated(path: Path) -> list[tuple[int, Path]]:
    """The rotated files of ``path`` that exist (``<name>.<n>``), by ``n``."""
    pattern = re.compile(re.escape(path.name) + r"\.([0-9]{1,9})")
    found = []
    for file in path.parent.glob(glob.escape(path.name) + ".*"):
        match = pattern.fullmatch(file.name)
        if match:
            found.append((int(match.group(1)), file))
    return sorted(found)


def generations(path: Path) -> list[Path]:
    """Every file of a trace, oldest first: the rotated ones (``<path>.<n>``, the highest
    ``n`` oldest, a number past ``keep`` left by an earlier setting included), then
    ``path``. What erasure rewrites and a recorded recall is looked up in."""
    return [file for _, file in reversed(_rotated(path))] + [path]


def _rotate(path: Path, keep: int) -> None:
    """``path`` becomes ``<path>.1``, each ``<path>.<n>`` becomes ``<path>.<n+1>``; files
    past ``keep`` (the oldest, or left by a larger ``keep``) are deleted; with ``keep`` 0
    the file itself is. Raises ``OSError``."""
    for n, file in _rotated(path):
        if n >= keep:
            file.unlink(missing_ok=True)
    for n in range(keep - 1, 0, -1):
        older = path.with_name(f"{path.name}.{n}")
        if older.exists():
            os.replace(older, path.with_name(f"{path.name}.{n + 1}"))
    if keep:
        os.replace(path, path.with_name(f"{path.name}.1"))
    else:
        path.unlink(missing_ok=True)


def _tenant_of(line: bytes) -> str | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    owner = event.get("tenant") if isinstance(event, dict) else None
    return owner if isinstance(owner, str) else None


def _copy_prefix(path: Path) -> str:
    """The name every rewrite's temporary copy of ``path`` starts with (``_replace``)."""
    return f".{path.name}.erase-"


def _drop_stale_copies(path: Path) -> None:
    """Removes the temporary copies a rewrite killed before its replace left beside the
    file or one of its rotated files (``.<name>[.<n>].erase-<pid>``): such a copy holds
    every event but those of the tenant that rewrite erased, so the events of every other
    tenant (a later purge's subject among them) stay in it unless it goes. One writer per
    trace file is the supported set-up, so a copy found here (under the tracer's lock) is
    a dead process's."""
    copy = re.compile(re.escape(f".{path.name}") + r"(\.[0-9]{1,9})?\.erase-.*", re.DOTALL)
    for stale in path.parent.glob(glob.escape(f".{path.name}") + "*"):
        if copy.fullmatch(stale.name):
            stale.unlink(missing_ok=True)


def _replace(path: Path, lines: list[bytes]) -> None:
    tmp = path.with_name(f"{_copy_prefix(path)}{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class RecallTrace:
    """The per-recall view of a tracer; a no-op when the tracer is None."""

    def __init__(self, tracer: Tracer | None, rid: str, tenant: str | None = None) -> None:
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

    def ids(self, hits: Sequence[Hit]) -> list[str] | None:
        """The memory ids of ``hits`` for an event, when events are written."""
        return None if self.tracer is None else [h.memory.id for h in hits]

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
        if error is not None:
            event["error"] = error
        event.update(extra)
        self.tracer.emit(event)


def tracer_from_settings(settings: Any) -> Tracer | None:
    """Config.trace -> a Tracer, or None when tracing is off (the default)."""
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
    )


_SHARED: dict[tuple[str, bool, int, int], Tracer] = {}
_SHARED_LOCK = threading.Lock()


def erase_tenant(settings: Any, tenant: str) -> TraceErasure | None:
    """``tenant``'s events out of the configured trace file; None when there is none.

    With tracing off, the file tracing wrote to when it was on (``written_path``: the path
    still set, else the default one) is erased too when it exists: the events written
    while tracing was on stay there after it is switched off.
    """
    tracer = shared_tracer(settings)
    if tracer is None:
        written = getattr(settings, "written_path", None)
        path = written() if callable(written) else getattr(settings, "path", None)
        if not path or not Path(path).expanduser().is_file():
            return None
        tracer = Tracer(path)
    return tracer.erase_tenant(tenant)


def shared_tracer(settings: Any) -> Tracer | None:
    """Like ``tracer_from_settings`` but one Tracer per (path, include_content, bounds) per
    process, so ``seq`` stays monotonic across recalls writing to the same file."""
    if settings is None or not getattr(settings, "enabled", False):
        return None
    fresh = tracer_from_settings(settings)
    if fresh is None:
        return None
    key = (str(fresh.path), fresh.include_content, fresh.max_bytes, fresh.keep)
    with _SHARED_LOCK:
        return _SHARED.setdefault(key, fresh)
