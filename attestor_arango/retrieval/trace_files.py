"""The files of a recall trace on disk: where each tenant's events go, rotation, erasure.

The layout (``trace.py`` says why): each tenant's events in ``tenant_file`` inside
``tenant_folder``, each file rotated on its own (``rotate``: ``<file>.1`` newest ...
``<file>.<keep>``); the file ``trace.path`` names is the one earlier versions shared
between tenants, read and erased (``erase_in``: an atomic rewrite without the tenant's
events) but no longer written.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import logging
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("attestor_arango.retrieval.trace")

MakeFile = Callable[[Path], None]
"""Creates a file empty, when missing, with the permission bits the trace's files take
(core passes ``core.linefile.create_like`` against the store's database file)."""


@dataclass
class TraceErasure:
    """What ``Tracer.erase_tenant`` did: events removed, events it could not attribute to
    any tenant (written before events named one, or unreadable lines), and the tenant's
    events left because a rewrite or delete failed (``error`` says why; -1: unknown)."""

    removed: int = 0
    unattributed: int = 0
    left: int = 0
    error: str | None = None


def tenant_file(path: Path, tenant: str) -> Path:
    """``<path>.tenants/<digest>.jsonl``: the file of ``tenant``'s events when the trace is
    configured at ``path``. The digest (32 hex digits of SHA-256 over the id's UTF-8
    bytes, lone surrogates passed through) is the whole name, so any id, ``../x`` or
    ``a/b`` or 10,000 characters, names a file directly inside the folder."""
    digest = hashlib.sha256(tenant.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return tenant_folder(path) / f"{digest}.jsonl"


def tenant_folder(path: Path) -> Path:
    """``<path>.tenants``: the folder of every tenant's file of the trace at ``path``."""
    return path.with_name(f"{path.name}.tenants")


def tenant_generations(path: Path, tenant: str) -> list[Path]:
    """Every file that may hold ``tenant``'s events, oldest first: the generations of the
    shared file earlier versions wrote (``path``), then those of the tenant's own file.
    What a recorded recall of the tenant is looked up in."""
    return generations(path) + generations(tenant_file(path, tenant))


def delete_all(files: list[Path], report: TraceErasure) -> None:
    """Deletes ``files`` (one tenant's: every event in them is the tenant's), counting
    their non-blank lines into ``report.removed``; a failure is recorded in ``report``
    (``error``, and ``left``: the events of the files not deleted, -1 when unknown),
    never raised."""
    deleted = False
    for n, file in enumerate(files):
        try:
            events = _count_events(file)
            file.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            report.error = f"deleting the trace file {file.name} failed: {exc.strerror or exc}"
            counts = [_count_events_or_unknown(f) for f in files[n:]]
            report.left = -1 if -1 in counts else sum(counts)
            return
        report.removed += events
        deleted = True
    if deleted:
        try:
            _sync_folder(files[-1].parent)
        except OSError as exc:
            report.error = f"making the trace files' deletion durable failed: {exc.strerror or exc}"


def _count_events(file: Path) -> int:
    """The non-blank lines of ``file``; raises ``OSError`` (``FileNotFoundError`` too)."""
    with file.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def _count_events_or_unknown(file: Path) -> int:
    """``_count_events``, 0 for a file that is gone, -1 for one that cannot be read."""
    try:
        return _count_events(file)
    except FileNotFoundError:
        return 0
    except OSError:
        return -1


def erase_in(
    file: Path, tenant: str, report: TraceErasure, make_file: MakeFile | None = None
) -> None:
    """``tenant``'s events out of one trace file, counted into ``report``; a failure is
    recorded there (``error``, ``left``), never raised. The rewritten file is made by
    ``make_file`` when given (the umask's bits otherwise)."""
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
        _replace(file, kept, make_file)
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


def rotate(path: Path, keep: int) -> None:
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


_FOLLOW_NONE = os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | _FOLLOW_NONE  # NONBLOCK: a FIFO
_NOT_A_FILE = (errno.ELOOP, errno.ENXIO, errno.EMLINK)  # a link (EMLINK: BSDs), a FIFO


def open_folder(folder: Path, private: bool) -> int:
    """A descriptor of ``folder``, made when missing (0700 when ``private``): a link or
    other non-folder at its name is removed (logged) and the folder made in its place;
    one owned by another user is refused. Raises ``OSError``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | _FOLLOW_NONE
    for _ in range(3):
        try:
            fd = os.open(folder, flags)
        except FileNotFoundError:
            folder.parent.mkdir(parents=True, exist_ok=True)
            _make_folder(folder, private)
            continue
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            log.warning("trace folder %s is not a folder (a link?): replaced", folder)
            folder.unlink()
            continue
        if os.fstat(fd).st_uid != os.geteuid():
            os.close(fd)
            raise PermissionError(
                errno.EACCES, "the trace folder belongs to another user; remove it", str(folder)
            )
        return fd
    raise OSError(errno.EAGAIN, "the trace folder keeps changing", str(folder))


def _make_folder(folder: Path, private: bool) -> None:
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700 if private else 0o777)


def open_append(folder: int, file: Path, bits: int | None) -> tuple[int, int]:
    """A descriptor appending to the regular file ``file``, in the folder open as
    ``folder``, owned by us with ``bits`` (the umask's when None), opened without
    following a link. Made anew (``O_EXCL``) when missing; anything else at the name (a
    link, FIFO, another user's file, a second link to a file) is removed with a logged
    warning and the file made anew; a file of ours with other bits is given ``bits``.
    Returns the descriptor and the file's size. Raises ``OSError`` (a folder at the name:
    ``IsADirectoryError``)."""
    for _ in range(3):
        try:
            fd = os.open(file.name, _APPEND, dir_fd=folder)
        except FileNotFoundError:
            fd = _create(folder, file.name, bits)
            if fd < 0:
                continue  # made by another writer meanwhile: open that one
            return fd, 0
        except OSError as exc:
            if exc.errno not in _NOT_A_FILE:  # named by its whole path, as open() does
                raise OSError(exc.errno, exc.strerror, str(file)) from exc
            _remove(folder, file, "is not a regular file (a link?)")
            continue
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_nlink != 1:
            os.close(fd)
            _remove(folder, file, "is not a regular file of ours with one name")
            continue
        if bits is not None and stat.S_IMODE(info.st_mode) != bits:
            os.fchmod(fd, bits)  # made beforehand with other bits: the store's now
        return fd, info.st_size
    raise OSError(errno.EAGAIN, "the trace file keeps changing", str(file))


def _create(folder: int, name: str, bits: int | None) -> int:
    """``name`` made (``O_EXCL``) with ``bits``; -1 when something is already there."""
    try:
        fd = os.open(
            name, _APPEND | os.O_CREAT | os.O_EXCL, 0o666 if bits is None else 0o600, dir_fd=folder
        )
    except FileExistsError:
        return -1
    if bits is not None:
        os.fchmod(fd, bits)
    return fd


def _remove(folder: int, file: Path, why: str) -> None:
    log.warning("trace file %s %s: replaced by a new file, nothing written to it", file, why)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(file.name, dir_fd=folder)


def append(fd: int, data: bytes) -> None:
    """All of ``data`` written to ``fd``. Raises ``OSError``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _tenant_of(line: bytes) -> str | None:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):  # not an event, or nested too deeply to read
        return None
    owner = event.get("tenant") if isinstance(event, dict) else None
    return owner if isinstance(owner, str) else None


def _copy_prefix(path: Path) -> str:
    """The name every rewrite's temporary copy of ``path`` starts with (``_replace``)."""
    return f".{path.name}.erase-"


def drop_stale_copies(path: Path) -> None:
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


def _replace(path: Path, lines: list[bytes], make_file: MakeFile | None) -> None:
    tmp = path.with_name(f"{_copy_prefix(path)}{os.getpid()}")
    try:
        # a killed rewrite's copy, or a link planted at this foreseeable name, goes; the
        # copy is made anew, never opened through a link
        tmp.unlink(missing_ok=True)
        if make_file is not None:
            make_file(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _FOLLOW_NONE, 0o666)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            os.close(fd)  # planted between the unlink and the open: not ours to fill
            raise OSError(errno.EEXIST, "the rewrite's copy was made by someone else", str(tmp))
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """A rename or delete in ``folder`` made durable; raises ``OSError``."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
