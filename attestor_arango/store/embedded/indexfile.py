"""One derived index as one file: named numpy sections, checksummed, written atomically.

The embedded store keeps each tenant's vector index and text index beside the
SQLite file, so that opening a store and its first recall map what they read
instead of rebuilding everything from the rows (3.6-3.9 s at 100k memories).
Such a file is only ever a cache of the SQLite rows: when it is missing, of an
unknown format, stale or corrupt it is rebuilt from them, never trusted.

Layout: an 8-byte magic with the format version, the header's length and CRC-32,
the header (JSON: what the file reflects, per section its offset, dtype and
shape, and where the block checksums are), then each section at a 64-byte
aligned offset, then the block checksums: a CRC-32 per 16 KiB block of every
section (uint32, with their own CRC-32 in the header). A file is
written to a temporary name in the same folder, flushed, fsynced and renamed
over the old one (then the folder is fsynced), so a reader sees the old file or
the new one, whole, and a writer killed half-way leaves only a temporary file
that nothing reads (``index_temps`` clears those of dead writers).

Checksums are verified when a file is opened, section by section, by reading
the file (not through the mapping, so verification adds no resident memory);
sections named in ``lazy`` are skipped there and checked as they are read: a
reader names the byte spans it is about to use (``check``) and each block they
touch is verified the first time (the texts, terms and postings of a text index:
a recall reads a few hundred rows of them, and checking a million rows' worth at
the first recall cost a quarter of it), or the owner keeps checksums of its own
(the float32 vectors' per-row CRCs). A block that does not match raises
``IndexFileError`` where it is read, and the store rebuilds the index.
"""

from __future__ import annotations

import json
import mmap
import os
import stat
import struct
import threading
import weakref
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.store.embedded.index_temps import temp_name

MAGIC = b"ATIDX\x00\x00\x02"  # last byte: the format version (2: block checksums)
_FIXED = struct.Struct("<8sQI4x")  # magic, header length, header CRC-32
_ALIGN = 64
_READ = 1 << 22  # bytes per read while verifying
BLOCK = 1 << 14  # bytes per checksum block


class IndexFileError(Exception):
    """The file is missing, of another format, or does not match its checksums."""


class RowsChanged(Exception):
    """The rows an index reflects changed before its file was written (``write_temp``)."""


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def crc32(data: Any) -> int:
    return zlib.crc32(memoryview(data).cast("B")) & 0xFFFFFFFF  # an array or bytes


@dataclass(frozen=True)
class Generation:
    """What a tenant's index reflects: the counters schema migration 4 keeps per tenant."""

    epoch: str = ""
    inserts: int = 0
    closes: int = 0
    changes: int = 0
    last_rowid: int = 0

    def as_meta(self) -> list[Any]:
        return [self.epoch, self.inserts, self.closes, self.changes, self.last_rowid]

    @classmethod
    def from_meta(cls, value: Any) -> Generation:
        epoch, inserts, closes, changes, last_rowid = value
        if not isinstance(epoch, str) or not all(
            isinstance(v, int) for v in (inserts, closes, changes, last_rowid)
        ):
            raise IndexFileError("the file's generation is not of the expected form")
        return cls(epoch, inserts, closes, changes, last_rowid)

    def can_catch_up_to(self, now: Generation) -> bool:
        """True when ``now`` differs from this only by inserted or closed rows."""
        return (
            self.epoch == now.epoch
            and self.changes == now.changes
            and self.inserts <= now.inserts
            and self.closes <= now.closes
            and self.last_rowid <= now.last_rowid
        )


Section = np.ndarray | tuple[np.ndarray, ...]
Current = Callable[[], bool] | None  # whether the rows still are what a file would reflect


def write_temp(
    path: Path,
    meta: Mapping[str, Any],
    sections: Mapping[str, Section],
    mode: int | None = None,
    current: Current = None,
) -> Path:
    """Writes ``meta`` and ``sections`` to a fsynced temporary file beside ``path``, with
    permission bits ``mode`` (None: the umask's; a folder made for it is private when
    ``mode`` is).

    ``current``: asked once the empty file exists, before a byte is written; False removes
    it (``RowsChanged``). An erasure removes its tenant's temporary files once it committed
    (``index_temps.remove_temps``), so it finds a file begun before, and one begun after is never
    written: a writer killed at any point leaves no erased row behind.

    A section given as a tuple of arrays (same dtype and row shape) is written as their
    concatenation without building it (saving an index again writes its mapped rows and
    its new rows with no copy of them in memory). ``install`` then renames the file over
    ``path``; the caller unlinks it if it does not.
    """
    parts = {
        name: tuple(np.ascontiguousarray(p) for p in (a if isinstance(a, tuple) else (a,)))
        for name, a in sections.items()
    }
    # offsets are relative to the first section, which starts after the header (aligned)
    table: dict[str, dict[str, Any]] = {}
    blocks: list[int] = []
    offset = 0
    for name, pieces in parts.items():
        first = pieces[0]
        if any(p.dtype != first.dtype or p.shape[1:] != first.shape[1:] for p in pieces):
            raise ValueError(f"the parts of section {name} differ in dtype or row shape")
        nbytes = sum(p.nbytes for p in pieces)
        table[name] = {
            "offset": offset,
            "dtype": first.dtype.str,
            "shape": [sum(len(p) for p in pieces), *first.shape[1:]] if first.ndim else [],
            "block0": len(blocks),
            "nbytes": nbytes,
        }
        blocks += _block_crcs(pieces)
        offset = _aligned(offset + nbytes)
    crcs = np.array(blocks, dtype="<u4")
    where = {"offset": offset, "count": len(blocks), "crc32": crc32(crcs)}
    header = json.dumps(
        {"meta": dict(meta), "sections": table, "blocks": where}, sort_keys=True
    ).encode()
    base = _aligned(_FIXED.size + len(header))
    private = mode is not None and not mode & 0o077
    path.parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    tmp = temp_name(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        perm = 0o600 if mode is not None else 0o666
        # opened by name with those flags (``f.name`` stays the path)
        with open(tmp, "wb", opener=lambda name, _: os.open(name, flags, perm)) as f:
            if mode is not None:  # never more open than asked, not even while written
                os.fchmod(f.fileno(), mode)
            if current is not None and not current():
                raise RowsChanged(f"the rows {path.name} would reflect changed meanwhile")
            f.write(_FIXED.pack(MAGIC, len(header), crc32(header)))
            f.write(header)
            for name, pieces in parts.items():
                f.seek(base + table[name]["offset"])
                for p in pieces:
                    write_section(f, p)
            f.seek(base + where["offset"])
            f.write(crcs.tobytes())
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def install(tmp: Path, path: Path) -> None:
    """Renames a finished temporary file over ``path`` (atomic) and makes the rename durable."""
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_section(f: Any, a: np.ndarray) -> None:
    """Writes one section's bytes (a function of its own so a crash test can stop here)."""
    if a.nbytes:
        f.write(a.tobytes() if a.nbytes < _READ else memoryview(a).cast("B"))  # type: ignore[arg-type]


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class IndexFile:
    """An opened, verified index file: ``meta`` and read-only memory-mapped sections."""

    def __init__(self, path: Path, lazy: Iterable[str] = (), verify: bool = True) -> None:
        self.path = path
        self._map: mmap.mmap | None = None
        self._identity: tuple[int, int] | None = None  # the mapped file (device, inode)
        self._fd: int | None = None  # for read_rows, opened on first use; -1: not that file
        self._fd_lock = threading.Lock()
        try:
            with os.fdopen(_open_regular(path), "rb") as f:
                st = os.fstat(f.fileno())
                size = st.st_size
                fixed = f.read(_FIXED.size)
                if len(fixed) != _FIXED.size:
                    raise IndexFileError(f"{path} is too short to be an index file")
                magic, length, header_crc = _FIXED.unpack(fixed)
                if magic != MAGIC:
                    raise IndexFileError(f"{path} is not an index file of format {MAGIC[-1]}")
                if length > size - _FIXED.size:  # read() would allocate what it claims
                    raise IndexFileError(f"{path}: the header runs past the file's end")
                header = f.read(length)
                if len(header) != length or crc32(header) != header_crc:
                    raise IndexFileError(f"{path}: the header does not match its checksum")
                parsed = json.loads(header)
                self.meta: dict[str, Any] = parsed["meta"]
                self._table: dict[str, dict[str, Any]] = parsed["sections"]
                self._base = _aligned(_FIXED.size + length)
                self._crcs = np.zeros(0, dtype="<u4")
                if verify:
                    self._crcs = _read_blocks(f, path, self._base, parsed["blocks"], size)
                skip = set(lazy)
                self._done: dict[str, np.ndarray] = {}  # per lazy section: blocks verified
                for name, s in self._table.items():
                    s["offset"] += self._base
                    if s["offset"] + s["nbytes"] > size:
                        raise IndexFileError(f"{path}: section {name} runs past the file's end")
                    if not verify:
                        continue
                    count = -(-s["nbytes"] // BLOCK)
                    if s["block0"] + count > len(self._crcs):
                        raise IndexFileError(f"{path}: section {name} has no block checksums")
                    if name in skip:
                        self._done[name] = np.zeros(count, dtype=bool)
                        continue
                    want = self._crcs[s["block0"] : s["block0"] + count]
                    if _file_blocks(f, s["offset"], s["nbytes"]) != want.tolist():
                        raise IndexFileError(f"{path}: section {name} does not match its checksum")
                if size:  # the same descriptor: what was verified is what is mapped
                    self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    self._identity = (st.st_dev, st.st_ino)
        except OSError as exc:
            raise IndexFileError(f"cannot read {path}: {exc}") from exc
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            raise IndexFileError(f"{path}: unreadable header ({exc})") from exc

    def names(self) -> list[str]:
        return list(self._table)

    def section(self, name: str) -> np.ndarray:
        """A read-only view of one section (no copy; pages load as they are read)."""
        s = self._table[name]
        if s["nbytes"] == 0 or self._map is None:
            return np.zeros(s["shape"], dtype=np.dtype(s["dtype"]))
        dtype = np.dtype(s["dtype"])
        # a plain read-only ndarray over the mapping (np.memmap's subclass costs per index)
        flat = np.frombuffer(self._map, dtype, s["nbytes"] // dtype.itemsize, s["offset"])
        return flat.reshape(s["shape"])

    def check(self, name: str, lo: np.ndarray, hi: np.ndarray) -> None:
        """Verifies the blocks of a lazy section that the byte spans [lo, hi) touch.

        Each block is checked once (through the mapping: its pages are being read
        anyway); IndexFileError when one does not match. Sections verified at open
        need no check.
        """
        done = self._done.get(name)
        if done is None:
            return
        keep = hi > lo
        first, last = lo[keep] // BLOCK, (hi[keep] - 1) // BLOCK
        if first.size == 0:
            return
        if bool((last - first <= 1).all()):
            if bool(done[first].all()) and bool(done[last].all()):  # the usual case: read before
                return
            touched = np.union1d(first, last)
        else:
            spans = zip(first.tolist(), last.tolist(), strict=True)
            touched = np.unique(np.concatenate([np.arange(a, b + 1) for a, b in spans]))
        todo = touched[~done[touched]]
        if todo.size == 0:
            return
        s = self._table[name]
        if self._map is None:  # an empty file has no block to check
            raise IndexFileError(f"{self.path}: section {name} has no mapped bytes to check")
        view = memoryview(self._map)
        try:
            for block in todo.tolist():
                start = s["offset"] + block * BLOCK
                end = min(start + BLOCK, s["offset"] + s["nbytes"])
                if crc32(view[start:end]) != int(self._crcs[s["block0"] + block]):
                    raise IndexFileError(f"{self.path}: block {block} of {name} is corrupt")
                done[block] = True
        finally:
            view.release()
        if bool(done.all()):  # every block verified: later reads need no check at all
            del self._done[name]

    def check_all(self, name: str) -> None:
        """Verifies every block of a lazy section (before its bytes are copied elsewhere)."""
        nbytes = self._table[name]["nbytes"]
        self.check(name, np.array([0]), np.array([nbytes]))

    def read_rows(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Some rows (ascending, unique) of a 2-D section, copied out without making the
        mapping's pages resident: positional reads of the file, consecutive rows in one.

        A page faulted in through the mapping maps its neighbours too (fault-around), and
        unmapping them again after each read (``release``) walked the whole section:
        reading 60 scattered rows of a 100k x 384 float32 matrix this way took a quarter
        of that CPU time (0.16 vs 0.62 ms), and leaves nothing resident. Where the file at
        ``path`` is no longer the one mapped (replaced or removed since) or the platform
        has no ``os.preadv``, the rows are read through the mapping and released.
        """
        s = self._table[name]
        shape, dtype = tuple(s["shape"]), np.dtype(s["dtype"])
        out = np.empty((rows.size, *shape[1:]), dtype=dtype)
        fd = self._row_fd()
        if fd is None or rows.size == 0:
            out[...] = self.section(name)[rows]
            self.release(name)
            return out
        width = s["nbytes"] // shape[0]
        view = memoryview(out).cast("B")  # type: ignore[arg-type]
        starts = np.flatnonzero(np.diff(rows, prepend=-2) != 1).tolist()  # runs of rows
        for a, b in zip(starts, [*starts[1:], rows.size], strict=True):
            at = s["offset"] + int(rows[a]) * width
            if os.preadv(fd, [view[a * width : b * width]], at) != (b - a) * width:
                raise IndexFileError(f"{self.path}: section {name} ends before row {rows[b - 1]}")
        return out

    def _row_fd(self) -> int | None:
        """A descriptor of the mapped file (opened once, closed with this object), or None."""
        if self._fd is None:
            with self._fd_lock:
                if self._fd is None:
                    self._fd = self._open_same()
        return self._fd if self._fd >= 0 else None

    def _open_same(self) -> int:
        if self._identity is None or not hasattr(os, "preadv"):
            return -1
        try:
            fd = _open_regular(self.path)
        except (OSError, IndexFileError):
            return -1  # removed (or replaced by what is no file) since it was mapped
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._identity:
            os.close(fd)
            return -1
        weakref.finalize(self, os.close, fd)
        return fd

    def release(self, name: str) -> None:
        """Unmaps the resident pages of a section from this process (MADV_DONTNEED): the
        mapping is read-only and its file never changed in place, so the next read faults
        them back in from the page cache with the same bytes. Readers that touch a few
        scattered rows of a large section call it after copying them out."""
        s = self._table[name]
        if self._map is None or s["nbytes"] == 0:
            return
        start = s["offset"] - s["offset"] % mmap.PAGESIZE  # madvise wants a page boundary
        self._map.madvise(mmap.MADV_DONTNEED, start, s["offset"] + s["nbytes"] - start)


def _block_crcs(pieces: tuple[np.ndarray, ...]) -> list[int]:
    """The CRC-32 of each BLOCK bytes of the pieces' concatenation (the last block shorter)."""
    out: list[int] = []
    crc, fill = 0, 0
    for p in pieces:
        view = memoryview(p).cast("B") if p.nbytes else memoryview(b"")  # type: ignore[arg-type]
        at = 0
        while at < len(view):
            take = min(BLOCK - fill, len(view) - at)
            crc = zlib.crc32(view[at : at + take], crc)
            fill += take
            at += take
            if fill == BLOCK:
                out.append(crc & 0xFFFFFFFF)
                crc, fill = 0, 0
    if fill:
        out.append(crc & 0xFFFFFFFF)
    return out


def _open_regular(path: Path) -> int:
    """A read-only descriptor of ``path``, a regular file: a FIFO at an index file's name
    (or a symlink to one) blocked the open, and the store's first recall, for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IndexFileError(f"{path} is not a regular file")
    return fd


def _read_blocks(f: Any, path: Path, base: int, where: dict[str, Any], size: int) -> np.ndarray:
    """The file's block checksums, checked against their own CRC-32 in the header."""
    if not 0 <= where["count"] <= size // 4:  # read() would allocate what it claims
        raise IndexFileError(f"{path}: the block checksums run past the file's end")
    f.seek(base + where["offset"])
    raw = f.read(4 * where["count"])
    if len(raw) != 4 * where["count"] or crc32(raw) != where["crc32"]:
        raise IndexFileError(f"{path}: the block checksums do not match their checksum")
    return np.frombuffer(raw, dtype="<u4")


def _file_blocks(f: Any, offset: int, nbytes: int) -> list[int]:
    """The CRC-32 of each block of a section, read from the file (not the mapping)."""
    f.seek(offset)
    out: list[int] = []
    left = nbytes
    while left:
        chunk = f.read(min(_READ, left))
        if not chunk:
            raise IndexFileError("the file ends inside a section")
        view = memoryview(chunk)
        out += [zlib.crc32(view[i : i + BLOCK]) & 0xFFFFFFFF for i in range(0, len(view), BLOCK)]
        left -= len(chunk)
    return out
