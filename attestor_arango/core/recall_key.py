"""The key a tenant's recall ids are made with (``retrieval.trace.recall_id``).

A recall id was the plain SHA-256 of the recall's inputs. Every input but the query is in
the trace's start event (tenant, namespace, as_of, window, budget) and the default
retrieval config is in the package, so whoever read a trace file (moved to a log volume,
pasted into a ticket) or a pack carrying the id confirmed a guessed query offline, though
the trace keeps no query text. The id is an HMAC under a key of the store: the same recall
has the same id in one store (a replay still matches it, the store reopened too, another
process or machine on the same ArangoDB database too), another store gives another id, and
only a process holding the key ties an id to a query.

The key is ``SALT_BYTES`` random bytes (``ids.new_key``: a seeded id source gives its
seed's), hex, kept IN the store, one per tenant (``Store.get_recall_key``; the embedded
file's ``recall_keys`` table, schema 12; ArangoDB's ``recall_keys`` collection), so reading
needs no write beside the store and every opener of one store agrees. A tenant's first
memory written keeps it (``keep_recall_key``, in ``core/writes.py``'s one write path, in
its transaction), or, for a tenant without one (written before, or only imported), its
first recall by a process that may write (``put_recall_key``: never replaced,
two first callers at once keep one). It is no data of the subject: a purge keeps it (as the quota),
an export does not carry it (a store an export is imported into makes its own).

Session 30 kept one key a store in a file (``<db>.recall-key`` beside the embedded file,
``recall-key-<database>`` in the data directory for ArangoDB). That file, when present, is
the key a tenant without one is given, so a store's ids stay what they were; it is only
read (never through a link). A store that cannot be written (a read-only file or account)
and keeps no key for the tenant uses that file's key, else ``derived_key``: deterministic,
from the tenant's first audit entry, which only the store holds (a tenant with no entry
holds nothing to recall: its key is derived from the tenant id alone). Once a writer keeps
a key, a new reader uses it: ids recorded by a read-only reader before then differ.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from pathlib import Path
from weakref import WeakKeyDictionary

from attestor_arango.config import RECALL_KEY_END, Config, default_data_dir
from attestor_arango.errors import AttestorError, StoreError
from attestor_arango.ids import SALT_BYTES, new_key
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import AuditStore, Store

_HEX = re.compile(rf"[0-9a-f]{{{2 * SALT_BYTES}}}")
_KEYS: WeakKeyDictionary[object, dict[str, bytes]] = WeakKeyDictionary()  # store -> tenant
_LOCK = threading.Lock()


def key_path(config: Config) -> Path | None:
    """Where session 30 kept the store's key; None for an in-memory store."""
    if config.backend != "embedded":
        return default_data_dir() / f"recall-key-{config.arango.database}"
    raw = str(config.path or "")
    if raw == ":memory:" or raw.startswith("file::memory:"):
        return None
    db = config.db_path().resolve()
    return db.with_name(db.name + RECALL_KEY_END)


def recall_key(store: Store, config: Config, ids: object, tenant: str) -> bytes:
    """The key of ``tenant``'s recall ids in ``store`` (read once per store object);
    raises ``StoreError`` when the store cannot be read or holds a key that is no key."""
    with _LOCK:
        held = _KEYS.get(store, {}).get(tenant)
    if held is not None:
        return held
    scope = Scope(tenant)
    text = store.get_recall_key(scope)
    if text is None:
        legacy = _legacy(config)
        made = legacy if legacy is not None else new_key(ids)
        text = store.put_recall_key(scope, made.hex())
        if text is None:  # the store cannot be written here
            text = (legacy or derived_key(store, scope)).hex()
    if not _HEX.fullmatch(text):
        raise StoreError(
            f"the store's recall-id key of tenant {tenant!r} is not {2 * SALT_BYTES} hex "
            "digits; the store was altered outside attestor"
        )
    key = bytes.fromhex(text)
    with _LOCK:
        _KEYS.setdefault(store, {})[tenant] = key
    return key


def keep_recall_key(store: Store, config: Config, ids: object, tenant: str) -> None:
    """At each memory written (``Writer.write``): the tenant's key is kept now if it has none,
    so its recalls only read (the first writer keeps it). A failure here is left for the
    recall to raise: the write does not depend on the key."""
    with contextlib.suppress(AttestorError):
        recall_key(store, config, ids, tenant)


def derived_key(store: AuditStore, scope: Scope) -> bytes:
    """The key of a tenant whose store keeps none and cannot be written: the SHA-256 of
    its first audit entry's hash (the chain outlives a purge, so the key does too)."""
    first = store.read_audit(scope, 1)
    seed = first[0].hash if first else ""
    return hashlib.sha256(f"attestor recall key\0{scope.tenant}\0{seed}".encode()).digest()


def _legacy(config: Config) -> bytes | None:
    """The key session 30 kept in a file; None when there is none. Raises ``StoreError``
    for a file that holds no key or cannot be read (a link at its name)."""
    path = key_path(config)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            text = fh.read(4 * SALT_BYTES).decode("ascii", errors="replace").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(
            f"the store's recall-id key {path} cannot be read: {exc.strerror or exc}"
        ) from exc
    if not _HEX.fullmatch(text):
        raise StoreError(
            f"{path} holds no recall-id key ({2 * SALT_BYTES} hex digits); remove it and a "
            "new key is kept in the store (recall ids recorded before then no longer match)"
        )
    return bytes.fromhex(text)
