"""Attack battery: what lies at an index file's name beside the store, and lengths it claims.

The store opens ``<db>.idx/<tenant digest>.<kind>`` on a tenant's first read. A FIFO there
(or a symlink to one) made that open block until some process wrote to it: the store hung
on its first recall, for ever. A header claiming a length of 2**62 bytes (before its
checksum is read) had ``read`` allocate that much: MemoryError out of a recall; a header
nesting 100,000 deep (with its CRC) a bare RecursionError. Now a file that is not a
regular file, claims more bytes than it has, or nests too deeply is an
``IndexFileError``: the index is rebuilt from the rows and the answers are the rows'.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import indexfile
from attestor_arango.store.embedded.indexfile import IndexFile, IndexFileError

CTX = AgentContext(agent_id="o", role=AgentRole.ORCHESTRATOR, tenant="t", namespace="n")
HANG_GUARD_S = 60  # not a timing assertion: an open that blocks never returns at all


class Hung(Exception):
    pass


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Turns a call blocked for ever into a failure instead of a stuck test run."""

    def hung(signum: int, frame: object) -> None:
        raise Hung("the store blocked opening an index file")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_GUARD_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _store(tmp_path: Path) -> tuple[Path, list[Path]]:
    db = tmp_path / "mem.db"
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann likes green tea", context=CTX)
        mem.recall("tea", context=CTX)  # builds and saves both indexes
    files = sorted(db.with_name("mem.db.idx").glob("*"))
    assert {f.suffix for f in files} == {".text", ".vectors"}  # the premise
    return db, files


def _answers_from_the_rows(db: Path) -> None:
    with AgentMemory(db, embedder=HashingEmbedder(64)) as mem:
        assert [m.content for m in mem.search("tea", context=CTX)] == ["Ann likes green tea"]
        assert [r.memory.content for r in mem.recall("green tea", context=CTX).results] == [
            "Ann likes green tea"
        ]
        mem.add("Bob likes black tea", context=CTX)
        assert len(mem.search("tea", context=CTX)) == 2


def _fifo(file: Path, tmp_path: Path) -> None:
    file.unlink()
    os.mkfifo(file)


def _link_to_fifo(file: Path, tmp_path: Path) -> None:
    target = tmp_path / f"pipe-{file.suffix[1:]}"
    os.mkfifo(target)
    file.unlink()
    file.symlink_to(target)


@pytest.mark.parametrize("make", [_fifo, _link_to_fifo], ids=["fifo", "symlink-to-fifo"])
def test_a_fifo_at_an_index_files_name_is_rebuilt_not_a_hang(
    tmp_path: Path, no_hang: None, make: Callable[[Path, Path], None]
) -> None:
    db, files = _store(tmp_path)
    for file in files:
        make(file, tmp_path)
    with pytest.raises(IndexFileError, match="regular file"):
        IndexFile(files[0])
    _answers_from_the_rows(db)


def _claim(file: Path, length: int) -> None:
    """The fixed part's header length set to ``length`` (magic and CRC left as they are)."""
    data = bytearray(file.read_bytes())
    data[8:16] = struct.pack("<Q", length)
    file.write_bytes(bytes(data))


def _forge_block_count(file: Path, count: int) -> None:
    """A header that checks (its CRC recomputed) but claims ``count`` block checksums."""
    data = file.read_bytes()
    magic, length, _ = struct.unpack("<8sQI4x", data[:24])
    header = json.loads(data[24 : 24 + length])
    header["blocks"]["count"] = count
    raw = json.dumps(header, sort_keys=True).encode()
    raw += b" " * (length - len(raw))  # same length: the sections stay where they are
    fixed = struct.pack("<8sQI4x", magic, length, zlib.crc32(raw) & 0xFFFFFFFF)
    file.write_bytes(fixed + raw + data[24 + length :])


def _deep_header(file: Path) -> None:
    """A file whose header checks (its CRC is the header's) but nests 100,000 deep."""
    raw = b'{"meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    magic = file.read_bytes()[:8]
    file.write_bytes(struct.pack("<8sQI4x", magic, len(raw), zlib.crc32(raw)) + raw)


@pytest.mark.parametrize(
    "tamper",
    [
        _deep_header,
        lambda f: _claim(f, 2**62),
        lambda f: _claim(f, 2**40),
        lambda f: _forge_block_count(f, 2**35),
    ],
    ids=["deep-header", "header-2**62", "header-2**40", "blocks-2**35"],
)
def test_a_file_claiming_more_bytes_than_it_has_is_rebuilt_not_a_memory_error(
    tmp_path: Path, tamper: Callable[[Path], None]
) -> None:
    db, files = _store(tmp_path)
    for file in files:
        tamper(file)
    with pytest.raises(IndexFileError):
        IndexFile(files[0])
    _answers_from_the_rows(db)


def test_a_mapped_file_swapped_for_a_fifo_is_not_opened_for_its_rows(
    tmp_path: Path, no_hang: None
) -> None:
    """Float rows are read from the file by a descriptor opened on first use (after the
    mapping): a FIFO put at the name meanwhile must not block that open either."""
    path = tmp_path / "x.vectors"
    import numpy as np

    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    indexfile.install(indexfile.write_temp(path, {"kind": "test"}, {"matrix": matrix}), path)
    file = IndexFile(path)
    path.unlink()
    os.mkfifo(path)
    assert file.read_rows("matrix", np.array([0, 2])).tolist() == matrix[[0, 2]].tolist()
