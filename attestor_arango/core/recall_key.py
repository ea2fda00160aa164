"""The key a store's recall ids are made with (``retrieval.trace.recall_id``).

A recall id was the plain SHA-256 of the recall's inputs. Every input but the query is in
the trace's start event (tenant, namespace, as_of, window, budget) and the default
retrieval config is in the package, so whoever read a trace file (moved to a log volume,
pasted into a ticket) or a pack carrying the id confirmed a guessed query offline, though
the trace keeps no query text. The id is now an HMAC under a key of the store: the same
recall has the same id in one store (a replay still matches it, the store reopened too),
another store gives another id, and only a process holding the key ties an id to a query.

The key is ``SALT_BYTES`` random bytes (``ids.new_key``: a seeded id source gives its
seed's), hex, in ``<store>.recall-key`` beside the embedded file (with the store's
permission bits, as its other files; made whole under a temporary name and linked into
place, so two processes never hold two keys; never read through a link), for ArangoDB in
the user's data directory (``recall-key-<database>``, one per machine, as its trace files
are), and kept with the store object for an in-memory store. A key file lost or replaced
gives new ids: traces recorded before then no longer match a replay's id (their result
ids still do).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path
from weakref import WeakKeyDictionary

from attestor_arango.config import RECALL_KEY_END, Config, default_data_dir
from attestor_arango.core.linefile import store_file
from attestor_arango.errors import StoreError
from attestor_arango.ids import SALT_BYTES, new_key

_HEX = re.compile(rf"[0-9a-f]{{{2 * SALT_BYTES}}}")
_KEYS: WeakKeyDictionary[object, bytes] = WeakKeyDictionary()  # by store object
_LOCK = threading.Lock()


def key_path(config: Config) -> Path | None:
    """Where the store's key is kept; None for an in-memory store (its object keeps it)."""
    if config.backend != "embedded":
        return default_data_dir() / f"recall-key-{config.arango.database}"
    raw = str(config.path or "")
    if raw == ":memory:" or raw.startswith("file::memory:"):
        return None
    db = config.db_path().resolve()
    return db.with_name(db.name + RECALL_KEY_END)


def recall_key(store: object, config: Config, ids: object) -> bytes:
    """The key of ``store`` (read once per store object, made at its first recall);
    raises ``StoreError`` when its file cannot be read or made, or holds no key."""
    with _LOCK:
        held = _KEYS.get(store)
        if held is not None:
            return held
        path = key_path(config)
        key = new_key(ids) if path is None else _read_or_make(path, config, ids)
        _KEYS[store] = key
        return key


def _read_or_make(path: Path, config: Config, ids: object) -> bytes:
    try:
        key = _read(path)
        if key is None:
            key = _make(path, config, ids)
    except OSError as exc:
        raise StoreError(
            f"the store's recall-id key {path} cannot be read or made: "
            f"{exc.strerror or exc}; recall needs it (fix the folder's permissions)"
        ) from exc
    return key


def _read(path: Path) -> bytes | None:
    """The key in ``path``; None when there is no file. Raises ``StoreError`` for a file
    that holds no key, ``OSError`` for one that cannot be read (a link at its name)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        text = fh.read(4 * SALT_BYTES).decode("ascii", errors="replace").strip()
    if not _HEX.fullmatch(text):
        raise StoreError(
            f"{path} holds no recall-id key ({2 * SALT_BYTES} hex digits); remove it and a "
            "new key is made (recall ids recorded before then no longer match a replay's)"
        )
    return bytes.fromhex(text)


def _make(path: Path, config: Config, ids: object) -> bytes:
    """A new key written to ``path``, or the key another process wrote there first."""
    key = new_key(ids)
    reference = store_file(config)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            if reference is not None and reference.exists():
                os.fchmod(fh.fileno(), reference.stat().st_mode & 0o666)
            fh.write(key.hex() + "\n")
        try:
            os.link(tmp, path)  # never replaces: a key another process made first stays
        except FileExistsError:
            theirs = _read(path)
            if theirs is None:
                raise
            return theirs
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return key
