"""Small bookkeeping files beside the store, one entry a line, replaced whole.

Re-embedding lists the staging files it was given and the CLI lists the export files it
wrote (``core/reembed.py``, ``governance/export_files.py``), so that a purge finds them.
Such a list is rewritten whole through a temporary file and an atomic rename, so a
reader never sees half of it, and it is deleted once empty. A change (``update_lines``)
holds the list's lock from its read to its write, so changes by several threads or
processes all land.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from attestor_arango.config import Config


def create_like(path: Path, reference: Path) -> None:
    """Creates ``path`` empty, when missing, with ``reference``'s permission bits (a store's
    file, as SQLite gives them to its -wal and -shm): a staging file beside a private
    store holds its tenant's vectors, and was created 0644 by the umask. Nothing when
    ``reference`` does not exist (an ArangoDB store). Raises ``OSError``."""
    mode = _bits_of(reference)
    if mode is None:
        return
    path.parent.mkdir(mode=0o777 if mode & 0o077 else 0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _bits_of(reference: Path) -> int | None:
    """``reference``'s read and write permission bits; None when it does not exist."""
    try:
        return stat.S_IMODE(os.stat(reference).st_mode) & 0o666
    except FileNotFoundError:
        return None


def store_file(config: Config) -> Path | None:
    """The file whose permission bits the files kept beside a store take: the embedded
    database's (as SQLite's -wal and -shm do); none for ArangoDB."""
    return config.db_path() if config.backend == "embedded" else None


def made_like_store(config: Config) -> Callable[[Path], None] | None:
    """``create_like`` against ``store_file``: how the recall trace makes its files (they
    hold the tenant's queries); None for ArangoDB (the umask's bits)."""
    reference = store_file(config)
    return None if reference is None else functools.partial(create_like, reference=reference)


def replace_lines(path: Path, lines: Sequence[str], like: Path | None = None) -> None:
    """Writes ``lines`` (without their newlines) as ``path``'s whole content, atomically,
    with ``like``'s permission bits when given and it exists (as ``create_like``); deletes
    ``path`` when there are none. Raises ``OSError`` when it cannot be written."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    mode = None if like is None else _bits_of(like)
    # a killed writer's copy, or a symlink planted at this foreseeable name, goes; the copy
    # is made anew (O_EXCL: never through a link) with like's bits, else the umask's
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        if mode is not None:
            os.fchmod(fd, mode)
        fh.write("".join(f"{line}\n" for line in lines))
    os.replace(tmp, path)


def read_lines(path: Path) -> list[str]:
    """``path``'s non-empty lines; none when it does not exist. Raises ``OSError`` when it
    cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line]


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Holds the lock of the list ``path`` while the block runs, against every thread and
    process changing a list of its folder through ``update_lines``.

    A list is read, changed and written back whole: two changes whose reads and writes
    interleave lose the first one's (an export recorded while a purge rewrote the ledger
    vanished from it, so the tenant's own purge left the file). The lock is the folder's
    (``flock`` of the folder itself, so no lock file is left beside the store; on Windows
    a ``.<name>.lock`` file beside the list). Raises ``OSError`` when it cannot be taken.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
            yield
        finally:
            os.close(fd)  # closing the descriptor lets go of the lock
        return
    import fcntl

    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor lets go of the lock


def update_lines(
    path: Path, change: Callable[[list[str]], Sequence[str]], like: Path | None = None
) -> None:
    """Replaces the list ``path``'s lines by what ``change`` makes of them (written with
    ``like``'s permission bits, ``replace_lines``), holding its lock (``locked``) from the
    read to the write; writes nothing when they are unchanged. Raises ``OSError`` when the
    list cannot be read or written, and what ``change`` raises."""
    with locked(path):
        lines = read_lines(path)
        changed = list(change(lines))
        if changed != lines:
            replace_lines(path, changed, like)
