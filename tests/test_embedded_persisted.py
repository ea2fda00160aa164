"""Persisted vector and text indexes: what a reopened store answers is what the rows say.

Every check compares a store that maps the index files against one on the same SQLite
file that builds its indexes from the rows (``persist_indexes=False``): the files are a
cache, so they may only ever change how fast an answer comes, never what it is.
"""

from __future__ import annotations

import functools
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango.clock import from_us
from attestor_arango.models import Memory, Provenance, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import indexfile
from attestor_arango.store.embedded import persisted as persisted_module
from attestor_arango.store.embedded import vectors as vectors_module
from attestor_arango.store.embedded.indexfile import IndexFile, IndexFileError
from attestor_arango.store.embedded.persisted import sections_of
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.embedded.text_sections import text_from_sections
from attestor_arango.store.embedded.vector_sections import vectors_from_sections
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import EmbeddingSpace
from attestor_arango.text import stemming

T0 = 1_767_225_600_000_000
DIM = 16
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "omega",
    "kappa",
    "river",
    "stone",
    "garden",
    "music",
    "paint",
    "camp",
]
SCOPES = [Scope("t", "n"), Scope("t", "other"), Scope("u", "n")]
VIEWS = [
    TemporalView(as_of=T0 + 10**9),
    TemporalView(as_of=T0 + 150),
    TemporalView(as_of=T0 + 10**9, include_closed=True),
]


def _vec(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _add(store: SQLiteStore, rng: random.Random, nrng: np.random.Generator, start: int, n: int):
    ids = []
    for i in range(start, start + n):
        scope = SCOPES[i % 3]
        text = " ".join(rng.choices(WORDS, k=rng.randint(2, 6))) + f" n{i}"
        m = Memory(
            id=f"m{i:06d}",
            tenant=scope.tenant,
            namespace=scope.namespace or "n",
            content=text,
            valid_from=from_us(T0 + i),
            t_created=from_us(T0 + i),
            provenance=Provenance(agent_id="a", role="planner"),
            content_hash=content_hash(text),
        )
        store.insert_memory(scope, m, _vec(nrng) if i % 5 else None)
        ids.append((scope, m.id))
    return ids


def _fresh(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    for tenant in ("t", "u"):
        store.set_embedding_space(Scope(tenant), EmbeddingSpace("test", DIM))
    return store


def _answers(store: SQLiteStore) -> list[object]:
    """Vector and text lanes over every scope, view and a few queries."""
    nrng = np.random.default_rng(5)
    out: list[object] = []
    for scope in [*SCOPES, Scope("t"), Scope("u")]:
        for view in VIEWS:
            for q in ("alpha river", "paint camp n7", "stone"):
                pool = store.text_pool(scope, q, 20, view)
                out.append([(h.id, h.content, h.score) for h in pool])
                out.append(store.scoring_terms(scope, [h.id for h in pool]))
            for _ in range(3):
                hits = store.vector_candidates(scope, _vec(nrng), 15, view)
                out.append([(h.memory.id, h.score) for h in hits])
        out.append(sorted(store.get_vectors(scope, ["m000001", "m000007", "m000012"])))
    return out


def _truth(path: Path) -> list[object]:
    store = SQLiteStore(path, persist_indexes=False)
    try:
        return _answers(store)
    finally:
        store.close()


def _reopened(path: Path) -> tuple[list[object], SQLiteStore]:
    store = SQLiteStore(path)
    return _answers(store), store


def _files(path: Path) -> list[Path]:
    folder = path.with_name(path.name + ".idx")
    return sorted(p for p in folder.glob("*") if ".tmp." not in p.name)


def test_reopened_store_maps_its_files_and_answers_the_same(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(1), np.random.default_rng(1), 0, 300)
    before = _answers(store)
    store.close()
    assert len(_files(path)) == 4  # text and vectors, two tenants
    got, reopened = _reopened(path)
    assert got == before == _truth(path)
    # the indexes came from the files, not from the rows
    assert reopened.caches.vectors["t"].n0 == reopened.caches.vectors["t"].n > 0
    assert reopened.caches.texts["t"]._base_terms
    reopened.close()


def test_rows_inserted_and_closed_elsewhere_are_caught_up(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    ids = _add(store, random.Random(2), np.random.default_rng(2), 0, 200)
    _answers(store)
    store.close()
    # another writer that keeps no files: inserts and closes rows
    other = SQLiteStore(path, persist_indexes=False)
    _add(other, random.Random(3), np.random.default_rng(3), 200, 50)
    for scope, memory_id in ids[::9]:
        other.close_memory(scope, memory_id, T0 + 100, "archived", None)
    other.close()
    got, reopened = _reopened(path)
    assert got == _truth(path)
    assert reopened.caches.vectors["t"].n0 > 0  # caught up, not rebuilt
    reopened.close()


def test_a_changed_or_deleted_row_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    ids = _add(store, random.Random(4), np.random.default_rng(4), 0, 200)
    _answers(store)
    store.close()
    other = SQLiteStore(path, persist_indexes=False)
    other.delete_memories(SCOPES[0], [i for s, i in ids[:30] if s == SCOPES[0]])
    other.db.conn.execute("UPDATE memories SET content = 'garden garden' WHERE id = 'm000031'")
    other.close()
    got, reopened = _reopened(path)
    assert got == _truth(path)
    assert reopened.caches.vectors["t"].n0 == 0  # rebuilt from the rows
    reopened.close()
    got, again = _reopened(path)  # and the rewritten file is used next time
    assert got == _truth(path) and again.caches.vectors["t"].n0 > 0
    again.close()


def test_writes_after_reopening_are_served_and_saved(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(5), np.random.default_rng(5), 0, 150)
    _answers(store)
    store.close()
    _, store = _reopened(path)
    ids = _add(store, random.Random(6), np.random.default_rng(6), 150, 40)
    store.close_memory(ids[0][0], ids[0][1], T0 + 160, "archived", None)
    assert _answers(store) == _truth(path)
    store.close()
    got, reopened = _reopened(path)
    assert got == _truth(path)
    reopened.close()


@pytest.mark.parametrize("section", ["matrix", "p.pairs", "contents", "terms", "r.times"])
def test_a_corrupt_section_is_noticed_and_rebuilt(tmp_path: Path, section: str) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(7), np.random.default_rng(7), 0, 300)
    _answers(store)
    store.close()
    kind = "vectors" if section == "matrix" else "text"
    for file in _files(path):
        if file.suffix != f".{kind}":
            continue
        f = IndexFile(file, lazy=("matrix",))
        offset, nbytes = f._table[section]["offset"], f._table[section]["nbytes"]
        del f
        with open(file, "r+b") as fh:  # every byte of the section changed
            fh.seek(offset)
            data = fh.read(nbytes)
            fh.seek(offset)
            fh.write(bytes(b ^ 0x5A for b in data))
    assert _reopened(path)[0] == _truth(path)


def test_unknown_format_or_truncated_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(8), np.random.default_rng(8), 0, 120)
    _answers(store)
    store.close()
    files = _files(path)
    files[0].write_bytes(b"ATIDX\x00\x00\x09" + files[0].read_bytes()[8:])  # another format
    with open(files[1], "r+b") as fh:
        fh.truncate(os.path.getsize(files[1]) // 2)
    with pytest.raises(IndexFileError):
        IndexFile(files[0])
    with pytest.raises(IndexFileError):
        IndexFile(files[1])
    assert _reopened(path)[0] == _truth(path)


def test_purge_removes_the_tenants_files(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(9), np.random.default_rng(9), 0, 60)
    _answers(store)
    digests = {p.stem for p in _files(path)}
    assert len(digests) == 2
    store.purge_tenant(Scope("u"))
    store.close()
    left = {p.stem for p in _files(path)}
    assert len(left) == 1
    # the purged tenant's generation row went with its rows: nothing names it any more
    conn = store.db.conn = None  # noqa: F841 - closed
    import sqlite3

    raw = sqlite3.connect(path)
    assert raw.execute("SELECT COUNT(*) FROM index_generation WHERE tenant='u'").fetchone() == (0,)
    raw.close()


def test_index_classes_round_trip_through_a_file(tmp_path: Path) -> None:
    """At 12k rows the vector index scans int8 codes: mapped codes, same exact answers."""
    rng = np.random.default_rng(11)
    n = 12_000
    vectors = TenantVectors(DIM)
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    times = np.array([[T0 + i, 2**62, T0, 2**62] for i in range(n)], dtype=np.int64)
    ids = [f"v{i:05d}" for i in range(n)]
    vectors.load(ids, ["n" if i % 3 else "o" for i in range(n)], matrix, times)
    arrays, meta = sections_of(vectors)
    path = tmp_path / "v.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path, lazy=("matrix",))
    mapped = vectors_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    assert not mapped._base_codes.flags.writeable  # a view of the file's mapping, not a copy
    assert not mapped._base_codes.flags.owndata
    for _ in range(5):
        q = rng.standard_normal(DIM).astype(np.float32)
        for ns in (None, "n"):
            view = TemporalView(as_of=T0 + n)
            assert mapped.search(q, 10, ns, view) == vectors.search(q, 10, ns, view)
    extra = rng.standard_normal(DIM).astype(np.float32)
    for index in (vectors, mapped):
        index.add("zz", "n", extra, T0, 2**62, T0, 2**62)
    view = TemporalView(as_of=T0 + n)
    assert mapped.search(extra, 3, None, view) == vectors.search(extra, 3, None, view)

    text = TenantText()
    text.load(ids[:50], ["n"] * 50, [f"alpha beta {i}" for i in range(50)], times[:50])
    arrays, meta = sections_of(text)
    path = tmp_path / "t.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path)
    mapped_text = text_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    for index in (text, mapped_text):
        index.add("new", "n", "alpha gamma", (T0, 2**62, T0, 2**62))
    for terms in (["alpha"], ["beta", "7"], ["gamma"]):
        assert mapped_text.search(terms, 10, "n", view) == text.search(terms, 10, "n", view)


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = [*WORDS, "the", "and", "running", "runs", "Ana's", "ﬁle", "42", "über"]
    return [" ".join(rng.choices(pool, k=rng.randint(0, 12))) + f" r{i % 37}" for i in range(n)]


def _sections_bytes(index: TenantText | TenantVectors) -> dict[str, bytes]:
    arrays, meta = sections_of(index)
    out = {"meta": repr(sorted(meta.items())).encode()}
    for name, a in arrays.items():
        parts = a if isinstance(a, tuple) else (a,)
        out[name] = b"".join(np.ascontiguousarray(p).tobytes() for p in parts)
    return out


def test_bulk_text_load_builds_the_index_adds_build() -> None:
    """``TenantText.load`` (one numpy sort) holds the same postings, columns and bytes as
    one ``add`` per row, and answers every query alike."""
    n = 700
    texts = _texts(n, 5)
    ids = [f"m{i:04d}" for i in range(n)]
    times = np.array([[T0 + i, 2**62, T0 + i % 50, 2**62] for i in range(n)], dtype=np.int64)
    namespaces = ["n" if i % 4 else "o" for i in range(n)]
    bulk, one_by_one = TenantText(), TenantText()
    bulk.load(ids, namespaces, texts, times, list(range(1, n + 1)))
    for i in range(n):
        one_by_one.add(ids[i], namespaces[i], texts[i], times[i].tolist(), i + 1)
    assert _sections_bytes(bulk) == _sections_bytes(one_by_one)
    view = TemporalView(as_of=T0 + n)
    for terms in (["alpha"], ["beta", "run"], ["the", "r3"], ["file", "uber"], ["absent"]):
        for ns in (None, "n", "o"):
            assert bulk.search(terms, 20, ns, view) == one_by_one.search(terms, 20, ns, view)
    for index in (bulk, one_by_one):  # rows added after a bulk load go the incremental way
        index.add("late", "n", "alpha river late", (T0, 2**62, T0, 2**62), n + 1)
    assert _sections_bytes(bulk) == _sections_bytes(one_by_one)
    assert bulk.search(["late"], 5, None, view) == one_by_one.search(["late"], 5, None, view)


def test_saving_a_mapped_index_again_writes_what_a_fresh_build_writes(tmp_path: Path) -> None:
    """A persisted index with rows added since is saved from its mapped arrays and its new
    rows (no decoding, no re-checksumming of old rows): the file holds exactly the bytes
    of an index built from all the rows at once, and maps back to the same answers."""
    rng = np.random.default_rng(3)
    n, extra = 900, 60
    texts = _texts(n + extra, 9)
    ids = [f"m{i:04d}" for i in range(n + extra)]
    times = np.array([[T0 + i, 2**62, T0, 2**62] for i in range(n + extra)], dtype=np.int64)
    matrix = rng.standard_normal((n + extra, DIM)).astype(np.float32)
    ns = ["n"] * (n + extra)
    fresh_text, fresh_vectors = TenantText(), TenantVectors(DIM)
    fresh_text.load(ids, ns, texts, times)
    fresh_vectors.load(ids, ns, matrix, times)
    for kind, first in (("t", TenantText()), ("v", TenantVectors(DIM))):
        if isinstance(first, TenantText):
            first.load(ids[:n], ns[:n], texts[:n], times[:n])
        else:
            first.load(ids[:n], ns[:n], matrix[:n], times[:n])
        arrays, meta = sections_of(first)
        path = tmp_path / f"{kind}.idx"
        indexfile.install(indexfile.write_temp(path, meta, arrays), path)
        f = IndexFile(path)
        load = text_from_sections if kind == "t" else vectors_from_sections
        mapped = load({k: f.section(k) for k in f.names()}, f.meta)
        for i in range(n, n + extra):
            if isinstance(mapped, TenantText):
                mapped.add(ids[i], "n", texts[i], times[i].tolist())
            else:
                mapped.add(ids[i], "n", matrix[i], *times[i].tolist())
        again = tmp_path / f"{kind}2.idx"
        arrays, meta = sections_of(mapped)
        indexfile.install(indexfile.write_temp(again, meta, arrays), again)
        fresh = fresh_text if kind == "t" else fresh_vectors
        arrays, meta = sections_of(fresh)
        reference = tmp_path / f"{kind}3.idx"
        indexfile.install(indexfile.write_temp(reference, meta, arrays), reference)
        assert again.read_bytes() == reference.read_bytes()


def test_a_corrupt_vector_row_is_refused_when_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    vectors = TenantVectors(DIM)
    times = np.array([[T0, 2**62, T0, 2**62]] * 40, dtype=np.int64)
    vectors.load([f"v{i}" for i in range(40)], ["n"] * 40, rng.standard_normal((40, DIM)), times)
    arrays, meta = sections_of(vectors)
    arrays["matrix"] = arrays["matrix"].copy()
    arrays["matrix"][7, 3] += 1.0  # the row no longer matches its CRC
    path = tmp_path / "v.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path, lazy=("matrix",))
    mapped = vectors_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    with pytest.raises(IndexFileError):
        mapped.search(rng.standard_normal(DIM).astype(np.float32), 5, None, TemporalView(T0))


WRITER = textwrap.dedent(
    """
    import sys, time
    from attestor_arango.store.embedded import indexfile
    from attestor_arango.store.embedded.store import SQLiteStore
    from attestor_arango.scope import Scope, TemporalView

    original = indexfile.write_section
    calls = [0]

    def stalls(f, a):
        original(f, a)
        calls[0] += 1
        if calls[0] == int(sys.argv[2]):  # part of the file is written: wait to be killed
            f.flush()
            print("writing", flush=True)
            time.sleep(60)

    indexfile.write_section = stalls
    store = SQLiteStore(sys.argv[1])
    store.text_pool(Scope("t", "n"), "alpha", 5, TemporalView(as_of=2**62))
    store.close()  # saves the caught-up text index
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("stop_after", [1, 6])
def test_writer_killed_while_writing_an_index_file(tmp_path: Path, stop_after: int) -> None:
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(13), np.random.default_rng(13), 0, 200)
    _answers(store)
    store.close()
    old = {p: p.read_bytes() for p in _files(path)}
    # new rows from a writer that keeps no files: the next close rewrites the text file
    other = SQLiteStore(path, persist_indexes=False)
    _add(other, random.Random(14), np.random.default_rng(14), 200, 100)
    other.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(stop_after)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    folder = path.with_name(path.name + ".idx")
    assert list(folder.glob("*.tmp.*")), "the killed writer left its temporary file"
    assert {p: p.read_bytes() for p in _files(path)} == old  # the old files are intact
    got, reopened = _reopened(path)
    assert got == _truth(path)
    reopened.close()
    assert not list(folder.glob("*.tmp.*"))  # the dead writer's temporary file is gone


def _mapped_rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of ``path`` (Linux /proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


def _mapped_vectors(
    tmp_path: Path, rng: np.random.Generator, n: int, dim: int
) -> tuple[TenantVectors, np.ndarray, Path, IndexFile, TenantVectors]:
    """An in-memory vector index of ``n`` random rows, the file it was saved to, and the
    index mapped back from that file with its float matrix read lazily."""
    vectors = TenantVectors(dim)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    times = np.array([[T0 + i, 2**62, T0, 2**62] for i in range(n)], dtype=np.int64)
    vectors.load([f"v{i:05d}" for i in range(n)], ["n"] * n, matrix, times)
    arrays, meta = sections_of(vectors)
    path = tmp_path / "v.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path, lazy=("matrix",))
    mapped = vectors_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    return vectors, matrix, path, f, mapped


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux smaps")
def test_read_float_rows_do_not_stay_resident(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large persisted index re-scores a few scattered float rows per query; through the
    mapping, with the kernel's fault-around, those pages added up to the whole matrix in a
    few hundred queries. They are copied out of the file instead, and read the same.
    A matrix this small would stay mapped (``_RESIDENT_BYTES``): the bound is lowered."""
    monkeypatch.setattr(vectors_module, "_RESIDENT_BYTES", 1 << 20)
    rng = np.random.default_rng(13)
    n, dim = 12_000, 96  # >= the int8 scan's threshold; the matrix is 4.6 MB
    vectors, matrix, path, f, mapped = _mapped_vectors(tmp_path, rng, n, dim)
    mapped.read_rows = functools.partial(f.read_rows, "matrix")
    baseline = _mapped_rss_kb(path)
    rows = np.arange(0, n, 7)  # every seventh row: every page of the matrix
    first = mapped.float_rows(rows)
    np.testing.assert_array_equal(first, matrix[rows].astype(np.float64))
    assert _mapped_rss_kb(path) < baseline + 1024  # the 4.6 MB read is not resident
    for start in range(300):  # many small scattered reads, as recalls make them
        mapped.float_rows(np.arange(start, n, 2400))
    assert _mapped_rss_kb(path) < baseline + 1024  # nor are they, read a few at a time
    again = mapped.float_rows(rows)
    np.testing.assert_array_equal(again, first)
    view = TemporalView(as_of=T0 + n)
    q = rng.standard_normal(dim).astype(np.float32)
    assert mapped.search(q, 10, None, view) == vectors.search(q, 10, None, view)


def test_large_float_rows_are_read_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A matrix larger than ``_RESIDENT_BYTES`` has its persisted rows read from the file
    (``read_rows``, each row once per call, in ascending order); one no larger is read
    through the mapping; what is read is the same either way, rows added since the file
    was written never come from it, a row asked twice in one call is read once, and rows
    the previous read took are not read again."""
    monkeypatch.setattr(vectors_module, "_RESIDENT_BYTES", 1 << 10, raising=False)
    rng = np.random.default_rng(14)
    n, dim = 10_500, 8  # >= the int8 scan's threshold
    _, matrix, _, f, mapped = _mapped_vectors(tmp_path, rng, n, dim)
    asked: list[list[int]] = []

    def read(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.tolist())
        return f.read_rows("matrix", rows)

    mapped.read_rows = read
    mapped.add("tail", "n", np.ones(dim, dtype=np.float32), T0 + n, 2**62, T0, 2**62)
    rows = np.arange(n - 1, 0, -300)  # 35 persisted rows, descending
    got = mapped.float_rows(rows)
    np.testing.assert_array_equal(got, matrix[rows].astype(np.float64))
    assert asked == [sorted(rows.tolist())]
    again = mapped.float_rows(rows[3:9])  # rows the last read took: no read of the file
    np.testing.assert_array_equal(again, matrix[rows[3:9]].astype(np.float64))
    assert len(asked) == 1
    tail = mapped.float_rows(np.array([n], dtype=np.intp), np.float32)  # no persisted row
    assert tail.dtype == np.float32 and tail[0].tolist() == [1.0] * dim
    assert len(asked) == 1
    both = mapped.float_rows(np.array([5, n, 5], dtype=np.intp), np.float32)
    np.testing.assert_array_equal(both[0], matrix[5])
    np.testing.assert_array_equal(both[2], matrix[5])
    assert asked[-1] == [5]
    assert set(mapped.gather(["v00005", "tail", "nope"], "n")[0]) == {"v00005", "tail"}
    monkeypatch.setattr(vectors_module, "_RESIDENT_BYTES", 1 << 30, raising=False)
    count = len(asked)
    np.testing.assert_array_equal(mapped.float_rows(rows), got)  # stays mapped: no file read
    assert len(asked) == count


def test_rows_read_from_a_replaced_or_removed_file_come_from_the_mapping(
    tmp_path: Path,
) -> None:
    """``read_rows`` reads the file it mapped: once another file took its name, or it was
    removed, rows come from the mapping (and are released again), never from the other
    file (fails if read_rows opens the path without checking it is the same file)."""
    rng = np.random.default_rng(15)
    _, matrix, path, f, _ = _mapped_vectors(tmp_path, rng, 300, 16)
    other = TenantVectors(16)
    times = np.array([[T0, 2**62, T0, 2**62]] * 300, dtype=np.int64)
    other.load([f"o{i}" for i in range(300)], ["n"] * 300, -matrix, times)
    arrays, meta = sections_of(other)
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)  # same name, new file
    rows = np.array([0, 1, 2, 150, 299])
    np.testing.assert_array_equal(f.read_rows("matrix", rows), matrix[rows])
    _, matrix2, path2, f2, _ = _mapped_vectors(tmp_path / "b", rng, 300, 16)
    path2.unlink()
    np.testing.assert_array_equal(f2.read_rows("matrix", rows), matrix2[rows])
    _, matrix3, _, f3, _ = _mapped_vectors(tmp_path / "c", rng, 300, 16)
    np.testing.assert_array_equal(f3.read_rows("matrix", rows), matrix3[rows])  # preadv
    assert f3._fd is not None and f3._fd >= 0
    descriptor = f3._fd
    del f3
    with pytest.raises(OSError):  # closed with its file object
        os.fstat(descriptor)


def test_a_corrupt_row_read_from_the_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows copied out of a large matrix's file are checked against their CRC-32 too."""
    monkeypatch.setattr(vectors_module, "_RESIDENT_BYTES", 1 << 10, raising=False)
    monkeypatch.setattr(vectors_module, "_INT8_ROWS", 0)
    rng = np.random.default_rng(16)
    vectors = TenantVectors(DIM)
    times = np.array([[T0, 2**62, T0, 2**62]] * 400, dtype=np.int64)
    vectors.load([f"v{i}" for i in range(400)], ["n"] * 400, rng.standard_normal((400, DIM)), times)
    arrays, meta = sections_of(vectors)
    arrays["matrix"] = arrays["matrix"].copy()
    arrays["matrix"][7, 3] += 1.0  # the row no longer matches its CRC
    path = tmp_path / "v.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path, lazy=("matrix",))
    mapped = vectors_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    mapped.read_rows = functools.partial(f.read_rows, "matrix")
    np.testing.assert_array_equal(mapped.float_rows(np.array([6, 8])), arrays["matrix"][[6, 8]])
    with pytest.raises(IndexFileError):
        mapped.float_rows(np.array([5, 7]))


def test_a_reopened_store_reads_its_float_rows_from_the_file(tmp_path: Path) -> None:
    """The store wires the file's row reader into the vector index it maps (persisted.py)."""
    db = tmp_path / "m.db"
    store = _fresh(db)
    _add(store, random.Random(1), np.random.default_rng(1), 0, 30)
    _answers(store)  # builds the indexes
    store.close()  # and saves them
    reopened = SQLiteStore(db)
    index = reopened.caches.tenant_vectors("t")
    assert index is not None and index.n0 > 0
    assert index.read_rows is not None
    np.testing.assert_array_equal(index.read_rows(np.array([0, 1])), index._base_matrix[:2])
    reopened.close()


def test_a_text_file_made_by_another_tokeniser_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text index files hold stems: after the stemmer, word pattern or stop words change
    (a new ``stemming.fingerprint``) they are rebuilt from the rows, not reused."""
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(9), np.random.default_rng(9), 0, 150)
    _answers(store)
    store.close()
    mapped: list[int] = []
    original = persisted_module.text_from_sections

    def counting(*args: Any, **kwargs: Any) -> TenantText:
        mapped.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(persisted_module, "text_from_sections", counting)
    got, reopened = _reopened(path)
    reopened.close()
    assert mapped and got == _truth(path)  # same tokeniser: the files are used
    mapped.clear()
    monkeypatch.setattr(stemming, "fingerprint", lambda: "another-stemmer")
    got, reopened = _reopened(path)
    reopened.close()
    assert not mapped and got == _truth(path)  # rebuilt from the rows, same answers
    meta = [IndexFile(f).meta for f in _files(path)]
    assert {m.get("tokeniser") for m in meta if m["kind"] == "text"} == {"another-stemmer"}


def test_a_mapped_row_table_finds_ids_without_building_a_dict(tmp_path: Path) -> None:
    """Ids of a persisted table are found by binary search over the file's sorted ids
    (no id -> row dict per opened index): same rows as the built table, for ids of
    other lengths, non-ASCII ids, prefixes of stored ids and ids never stored."""
    rng = random.Random(4)
    ids = [f"m{rng.randrange(10**9)}" + "é" * (i % 3) for i in range(3000)]
    ids = list(dict.fromkeys(ids))
    n = len(ids)
    times = np.array([[T0 + i, 2**62, T0, 2**62] for i in range(n)], dtype=np.int64)
    text = TenantText()
    text.load(ids, ["n"] * n, [f"alpha {i}" for i in range(n)], times, list(range(1, n + 1)))
    arrays, meta = sections_of(text)
    path = tmp_path / "t.idx"
    indexfile.install(indexfile.write_temp(path, meta, arrays), path)
    f = IndexFile(path)
    mapped = text_from_sections({k: f.section(k) for k in f.names()}, f.meta)
    assert mapped.rows._pos == {}  # nothing built per row at open
    mapped.add("late-é", "n", "alpha late", (T0, 2**62, T0, 2**62), n + 1)
    text.add("late-é", "n", "alpha late", (T0, 2**62, T0, 2**62), n + 1)
    longest = max(ids, key=lambda i: len(i.encode()))
    asked = [*rng.sample(ids, 200), "late-é", "absent", ids[0][:-1], ids[1] + "x", ""]
    asked += [longest + "x", longest + "\x00", ids[2] + "\x00"]  # cut or NUL-ended: absent
    assert mapped.rows.rows_of(asked) == text.rows.rows_of(asked)
    assert [mapped.rows.row_of(i) for i in asked] == [text.rows.row_of(i) for i in asked]
    assert mapped.rowids_of(asked) == text.rowids_of(asked)
    assert mapped.terms_of(asked) == text.terms_of(asked)
    rows = np.array(rng.sample(range(n + 1), 300))
    assert mapped.rows.take_ids(rows) == text.rows.take_ids(rows)
    view = TemporalView(as_of=T0 + n)
    assert mapped.search(["alpha"], 50, "n", view) == text.search(["alpha"], 50, "n", view)
    # saved again (mapped rows plus the new one): the same bytes as the built index's file
    assert _sections_bytes(mapped) == _sections_bytes(text)


def test_an_id_holding_a_nul_keeps_its_index_in_memory(tmp_path: Path) -> None:
    text = TenantText()
    times = np.array([[T0, 2**62, T0, 2**62]] * 2, dtype=np.int64)
    text.load(["a\x00", "a"], ["n", "n"], ["x", "y"], times)
    with pytest.raises(ValueError):
        sections_of(text)
    assert text.rows.rows_of(["a", "a\x00"]) == [("a", 1), ("a\x00", 0)]


def _text_store(tmp_path: Path, rows: int) -> tuple[Path, Path]:
    """A store of ``rows`` rows whose text file holds several checksum blocks of texts."""
    path = tmp_path / "s.db"
    store = _fresh(path)
    _add(store, random.Random(21), np.random.default_rng(21), 0, rows)
    _answers(store)
    store.close()
    digest = indexfile_digest("t")
    text_file = path.with_name(path.name + ".idx") / f"{digest}.text"
    return path, text_file


def indexfile_digest(tenant: str) -> str:
    import hashlib

    return hashlib.sha256(tenant.encode()).hexdigest()[:32]


def _flip(file: Path, offset: int) -> None:
    with open(file, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0x5A]))


def test_lazy_sections_are_checked_block_by_block_as_they_are_read(tmp_path: Path) -> None:
    """Opening a text file does not read its texts, terms and postings; a corrupt block
    of them is refused where it is read (and by a save that would copy it), while the
    blocks around it still read."""
    from attestor_arango.store.embedded import text_index

    _, text_file = _text_store(tmp_path, 6000)
    f = IndexFile(text_file)
    start, nbytes = f._table["contents"]["offset"], f._table["contents"]["nbytes"]
    assert nbytes > 3 * indexfile.BLOCK
    del f
    _flip(text_file, start + indexfile.BLOCK + 5)  # in the contents' second block
    with pytest.raises(IndexFileError):
        IndexFile(text_file)  # every section verified at open: refused
    f = IndexFile(text_file, lazy=text_index.LAZY)  # the lazy ones are not read at open
    f.check("contents", np.array([0, 2 * indexfile.BLOCK]), np.array([10, 2 * indexfile.BLOCK + 9]))
    with pytest.raises(IndexFileError):
        f.check("contents", np.array([indexfile.BLOCK]), np.array([indexfile.BLOCK + 1]))
    mapped = text_from_sections({k: f.section(k) for k in f.names()}, f.meta, f.check)
    assert mapped.contents[0]  # a row of the first block reads
    with pytest.raises(IndexFileError):
        sections_of(mapped)  # its bytes would be copied into a new file: checked whole first


@pytest.mark.parametrize("section", ["contents", "terms", "p.pairs"])
def test_a_corrupt_block_read_by_a_recall_rebuilds_the_text_index(
    tmp_path: Path, section: str
) -> None:
    path, text_file = _text_store(tmp_path, 6000)
    f = IndexFile(text_file)
    start, nbytes = f._table[section]["offset"], f._table[section]["nbytes"]
    del f
    for at in range(start, start + nbytes, indexfile.BLOCK):  # one byte in every block
        _flip(text_file, at + 3)
    got, store = _reopened(path)
    assert got == _truth(path)
    store.close()
    IndexFile(text_file)  # rewritten whole: every block verifies


@pytest.mark.parametrize(
    "bad", [{"namespaces": "n"}, {"dimension": "16"}, {"dimension": True}, {"dimension": 0}]
)
def test_a_header_of_the_wrong_types_is_refused_as_a_file_error(
    tmp_path: Path, bad: dict[str, object]
) -> None:
    """What a file's header says is checked by a raise (ValueError: the loader rebuilds from
    the rows), not an assert that ``python -O`` drops."""
    times = np.array([[T0, 2**62, T0, 2**62]] * 3, dtype=np.int64)
    vectors = TenantVectors(DIM)
    vectors.load(["a", "b", "c"], ["n"] * 3, np.ones((3, DIM), dtype=np.float32), times)
    text = TenantText()
    text.load(["a", "b", "c"], ["n"] * 3, ["alpha", "beta", "gamma"], times)
    for index in (vectors, text):
        arrays, meta = sections_of(index)
        if "dimension" in bad and index is text:
            continue
        with pytest.raises(ValueError, match="header"):
            load = text_from_sections if index is text else vectors_from_sections
            load(arrays, {**meta, **bad})


def test_a_vector_index_with_nothing_to_rebuild_from_raises_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corrupt file found mid-read is rebuilt from the rows; when the tenant's space went
    meanwhile there is nothing to rebuild from: a StoreError, not an AssertionError."""
    from attestor_arango.errors import StoreError

    store = _fresh(tmp_path / "m.db")
    _add(store, random.Random(1), np.random.default_rng(1), 0, 10)
    assert store.vector_candidates(SCOPES[0], _vec(np.random.default_rng(2)), 1, VIEWS[0])

    def corrupt(index: TenantVectors) -> None:
        raise IndexFileError("a block does not match its checksum")

    monkeypatch.setattr(store.caches, "tenant_vectors", lambda tenant: None)
    with pytest.raises(StoreError, match="retry"):
        store.caches.vector_read("t", corrupt)
    store.close()
