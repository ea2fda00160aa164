"""The trace paths a store's recalls were traced to, so a purge finds them all.

``trace.path`` is configuration: moved (to a log volume, another folder) or switched off,
the files written under the earlier path still hold the tenants' queries, and a purge that
erased the tenant from the configured trace only left them there and reported success.
So each path a store traces to is recorded, before its first event is written, in a list
beside the store (one resolved path a line; for ArangoDB in the user's data directory),
as the export ledger and the re-embedding staging list are (``core/linefile.py``), and
``erase_everywhere`` (called by ``purge_user``) erases the tenant under every path listed.
The list names paths only, never a tenant or a query.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from attestor_arango.config import Config, default_data_dir
from attestor_arango.core.linefile import read_lines, store_file, update_lines
from attestor_arango.retrieval.trace import MakeFile, TraceErasure, Tracer, erase_tenant

log = logging.getLogger("attestor_arango.retrieval.trace")

# (list, trace path) pairs this process recorded: a recall checks a set and a stat, not
# the list's lock, once its path is listed (paths only: no memory's or query's text)
_RECORDED: set[tuple[Path, Path]] = set()
_LOCK = threading.Lock()


def list_path(config: Config) -> Path:
    """Beside the embedded store's file (resolved: one list under every name of the store);
    for ArangoDB, in the user's data directory."""
    if config.backend == "embedded":
        db = config.db_path().resolve()
        return db.with_name(db.name + ".traces")
    return default_data_dir() / f"traces-{config.arango.database}.jsonl"


def record(config: Config, trace: Path) -> bool:
    """Lists ``trace`` (resolved) as a path this store traces to; True when it is listed.
    False (logged) when the list cannot be written: the caller then traces nothing, as a
    trace no purge would find must not be written."""
    listing, path = list_path(config), _resolved(trace)
    key = (listing, path)
    with _LOCK:
        if key in _RECORDED and listing.exists():
            return True
    try:
        update_lines(listing, lambda lines: lines if str(path) in lines else [*lines, str(path)],
                     store_file(config))  # fmt: skip
    except OSError as exc:
        log.warning("recall not traced: the list of trace paths %s cannot be written: %s",
                    listing, exc.strerror or exc)  # fmt: skip
        return False
    with _LOCK:
        _RECORDED.add(key)
    return True


def erase_everywhere(
    config: Config, tenant: str, make_file: MakeFile | None
) -> TraceErasure | None:
    """``tenant``'s events out of the configured trace (``retrieval.trace.erase_tenant``) and
    out of every other path the list names; None when no trace holds any file of it.
    Never raises: a list that cannot be read is reported in ``error``."""
    total = erase_tenant(config.trace, tenant, make_file)
    configured = _resolved(Path(config.trace.written_path()))
    try:
        listed = [Path(line) for line in read_lines(list_path(config))]
    except OSError as exc:
        out = total or TraceErasure()
        out.error = out.error or f"the list of trace paths cannot be read: {exc.strerror or exc}"
        out.left = out.left or -1
        return out
    for path in listed:
        if path == configured:  # cleaned above
            continue
        tracer = Tracer(path, make_file=make_file)
        if tracer.holds(tenant):
            total = _sum(total, tracer.erase_tenant(tenant))
    return total


def _resolved(path: Path) -> Path:
    """``path`` resolved; absolute as given when it cannot be (a link loop raises
    ``RuntimeError`` on Python 3.11): such a trace fails at its first write, as a
    ``StoreError`` naming it, not here."""
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path.expanduser()))


def _sum(total: TraceErasure | None, more: TraceErasure) -> TraceErasure:
    """Both erasures' counts; the first error."""
    if total is None:
        return more
    total.removed += more.removed
    total.unattributed += more.unattributed
    total.left = -1 if -1 in (total.left, more.left) else total.left + more.left
    total.error = total.error or more.error
    return total
