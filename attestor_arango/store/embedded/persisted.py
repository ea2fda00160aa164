"""Each tenant's vector and text index kept in files beside the SQLite store.

Loading a 100k-memory tenant's indexes from the rows took 3.6-3.9 s and left
~500 MB resident: every CLI call, server worker and notebook paid it on its
first recall. Now a built index is written to ``<store>.idx/`` (indexfile.py:
checksummed, versioned, atomic) and the next process maps it: the int8 codes,
the float32 vectors and the postings are read from the page cache as a query
touches them, and only a few numbers per row are copied into memory.

A file is a cache of the rows, never a source of truth. It records the
tenant's ``Generation`` (schema migration 4's counters, kept by triggers) and
is used only when nothing but inserts and closes happened since: rows inserted
since are read from the table (their rowids are above the file's last one),
closed rows get their ``t_expired`` again, and anything else (a deleted or
rewritten row, a new embedding space, another format, a bad checksum) makes
the index be rebuilt from the rows and the file rewritten. The counters say how many
rows changed, not which: a database restored from an older copy keeps the tenant's epoch,
and as many writes after it as were lost matched the file again, which then served the
lost rows and never the new ones. So a file also names the row at its last rowid and the
last row it holds closed (with when), and is used only while the rows agree. A file is only
installed while the tenant's rows still are what it reflects (checked under
the write lock), and a tenant's files go when its rows are purged.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Container
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.clock import OPEN
from attestor_arango.store.embedded import index_temps, indexfile, text_index
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess
from attestor_arango.store.embedded.indexfile import Generation, IndexFile, IndexFileError
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.embedded.text_sections import text_from_sections, text_sections
from attestor_arango.store.embedded.vector_sections import vector_sections, vectors_from_sections
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.store.protocol import EmbeddingSpace
from attestor_arango.text import stemming

FORMAT = 3  # 2: ids in a sorted lookup (rowtable.IdLookup), not newline-joined; 3: "marks"
KINDS = ("text", "vectors")
# a loaded file is rewritten once this many rows were added to it since (or at close)
_RESAVE_ROWS = 1000
_RESAVE_SHARE = 0.1

Index = TenantText | TenantVectors


def index_folder(db_path: str | Path) -> Path | None:
    """Where a store's index files live (None: an in-memory store keeps none): beside the
    resolved file, as SQLite keeps its journal, so every name of the store (a symlink to
    the file or its folder) finds the same files and a purge under any of them removes
    them (under the given name, a purge run with another left the subject's words)."""
    if str(db_path) == ":memory:" or str(db_path) == "":
        return None
    path = Path(db_path).resolve()
    return path.with_name(path.name + ".idx")


class PersistedIndexes:
    """Loading, catching up and saving the per-tenant indexes; held by the caches
    (caches.py), which decide when an index is loaded, kept or dropped."""

    def __init__(self, db: SQLiteAccess, folder: Path | None) -> None:
        self._db = db
        self.folder = folder
        self.written: set[str] = set()  # tenants with rows inserted by this process

    def index_path(self, tenant: str, kind: str) -> Path | None:
        if self.folder is None:
            return None
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        return self.folder / f"{digest}.{kind}"

    def _generation(self, tenant: str) -> Generation:
        row = self._db.execute(q.GET_GENERATION, {"tenant": tenant}).fetchone()
        return Generation() if row is None else Generation(*row)

    # loading --------------------------------------------------------------------------------
    def load_text(self, tenant: str) -> TenantText:
        with self._db.snapshot():
            gen = self._generation(tenant)
            index = self._from_file(tenant, "text", gen, {})
            if not isinstance(index, TenantText):
                index = TenantText()
                self._text_rows(index, tenant, 0)
            else:
                self._catch_up(index, tenant, gen)
            index.generation = gen
        self._save_if_due(tenant, "text", index)
        return index

    def load_vectors(self, tenant: str, space: EmbeddingSpace) -> TenantVectors:
        with self._db.snapshot():
            gen = self._generation(tenant)
            index = self._from_file(tenant, "vectors", gen, self._space_meta(space))
            if not isinstance(index, TenantVectors) or index.dimension != space.dimension:
                index = TenantVectors(space.dimension)
                self._vector_rows(index, tenant, 0)
            else:
                self._catch_up(index, tenant, gen)
            index.generation = gen
        self._save_if_due(tenant, "vectors", index, self._space_meta(space))
        return index

    @staticmethod
    def _space_meta(space: EmbeddingSpace) -> dict[str, Any]:
        return {"space": [space.name, space.dimension]}

    @staticmethod
    def _kind_meta(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
        """What a file of ``kind`` must match besides its format: a text index holds
        stems, so it is only reused under the tokeniser that made them."""
        return {**extra, "tokeniser": stemming.fingerprint()} if kind == "text" else extra

    def _from_file(
        self, tenant: str, kind: str, gen: Generation, extra: dict[str, Any]
    ) -> Index | None:
        """The persisted index when its file is whole, current enough and of this format."""
        path = self.index_path(tenant, kind)
        if path is None or not path.exists():
            return None
        try:
            file = IndexFile(path, lazy=("matrix",) if kind == "vectors" else text_index.LAZY)
            meta = file.meta
            if (meta.get("format"), meta.get("kind"), meta.get("tenant")) != (FORMAT, kind, tenant):
                return None
            if any(meta.get(k) != v for k, v in self._kind_meta(kind, extra).items()):
                return None
            saved = Generation.from_meta(meta.get("generation"))
            if not saved.can_catch_up_to(gen) or not self._marks_hold(tenant, meta, saved):
                return None
            if gen.inserts - saved.inserts > int(meta.get("rows", 0)):
                return None  # more rows to add than the file holds: one bulk load is cheaper
            sections = {name: file.section(name) for name in file.names()}
            index: Index
            if kind == "text":
                index = text_from_sections(sections, meta, file.check)
            else:
                index = vectors_from_sections(sections, meta)
                index.read_rows = functools.partial(file.read_rows, "matrix")
        except (IndexFileError, ValueError, KeyError, TypeError):
            return None  # rebuilt from the rows, and the file rewritten
        index.saved, index.saved_rows = saved, index.n
        return index

    def _id_at(self, tenant: str, rowid: int) -> str | None:
        row = self._db.execute(q.ID_AT_ROWID, {"tenant": tenant, "rowid": rowid}).fetchone()
        return None if row is None else str(row[0])

    def _marks(self, tenant: str, index: Index, gen: Generation) -> dict[str, Any]:
        """Which rows ``index`` reflects, beyond its counters: the id at its last rowid and
        the row it holds closed last (id, t_expired), as its file records them."""
        t_expired = index.rows.t_expired[: index.n]
        closed = np.flatnonzero(t_expired != OPEN)
        last_close = None
        if closed.size:
            i = int(closed[np.argmax(t_expired[closed])])
            last_close = [index.rows.take_ids([i])[0], int(t_expired[i])]
        return {"last_id": self._id_at(tenant, gen.last_rowid), "last_close": last_close}

    def _marks_hold(self, tenant: str, meta: dict[str, Any], saved: Generation) -> bool:
        """True while the rows are those the file's marks name (``_marks``): the row at its
        last rowid is the one it was, and its last closed row is closed at the same time."""
        marks = meta.get("marks")
        if not isinstance(marks, dict) or marks.get("last_id") != self._id_at(
            tenant, saved.last_rowid
        ):
            return False
        last_close = marks.get("last_close")
        if last_close is None:
            return True
        memory_id, t_expired = last_close
        if not isinstance(memory_id, str) or type(t_expired) is not int:
            return False
        row = self._db.execute(q.EXPIRED_OF, {"tenant": tenant, "id": memory_id}).fetchone()
        return row is not None and row[0] == t_expired

    def _rows_after(self, sql: str, tenant: str, after: int) -> list[tuple[Any, ...]]:
        """The tenant's rows past ``after`` as plain tuples (a ``sqlite3.Row`` per row of a
        million-row rebuild cost more than reading them)."""
        cur = self._db.execute(sql, {"tenant": tenant, "after": after})
        cur.row_factory = None
        rows: list[tuple[Any, ...]] = cur.fetchall()
        return rows

    @staticmethod
    def _times(rows: list[tuple[Any, ...]], first: int) -> np.ndarray:
        """Columns ``first..first+3`` of each row (the four times) as an (n, 4) array."""
        flat = np.fromiter(
            (t for r in rows for t in r[first : first + 4]), dtype=np.int64, count=4 * len(rows)
        )
        return flat.reshape(-1, 4)

    def _text_rows(self, index: TenantText, tenant: str, after: int) -> None:
        # rowid, id, namespace, content, t_created, t_expired, valid_from, valid_until
        rows = self._rows_after(q.LOAD_TEXTS, tenant, after)
        if not rows:
            return
        times = self._times(rows, 4)
        if index.n == 0:
            columns = list(zip(*[r[:4] for r in rows], strict=True))
            rowids, ids, namespaces, contents = columns
            index.load(ids, namespaces, contents, times, rowids)
            return
        for r, t in zip(rows, times.tolist(), strict=True):
            index.add(r[1], r[2], r[3], t, r[0])

    def _vector_rows(self, index: TenantVectors, tenant: str, after: int) -> None:
        # id, namespace, embedding, t_created, t_expired, valid_from, valid_until
        rows = self._rows_after(q.LOAD_VECTORS, tenant, after)
        if not rows:
            return
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
        matrix = matrix.reshape(len(rows), index.dimension)
        times = self._times(rows, 3)
        if index.n == 0 and index.n0 == 0:
            index.load([r[0] for r in rows], [r[1] for r in rows], matrix, times)
            return
        for r, vector, t in zip(rows, matrix, times.tolist(), strict=True):
            index.add(r[0], r[1], vector, *t)

    def _catch_up(self, index: Index, tenant: str, gen: Generation) -> None:
        """Rows inserted and closed since the file was written, from the table."""
        saved = index.saved
        if saved is None:  # _from_file sets it on every index it returns
            raise RuntimeError("a persisted index was loaded without the generation it holds")
        if saved.inserts != gen.inserts:
            if isinstance(index, TenantText):
                self._text_rows(index, tenant, saved.last_rowid)
            else:
                self._vector_rows(index, tenant, saved.last_rowid)
        if saved.closes != gen.closes:
            params = {"tenant": tenant, "upto": saved.last_rowid, "open": OPEN}
            for memory_id, t_expired in self._db.execute(q.CLOSED_ROWS, params).fetchall():
                index.set_expired(memory_id, t_expired)

    # saving ---------------------------------------------------------------------------------
    def _save_if_due(
        self, tenant: str, kind: str, index: Index, extra: dict[str, Any] | None = None
    ) -> None:
        """Writes the file after a rebuild, or once enough rows were added since it."""
        if index.saved is None or index.n - index.saved_rows >= max(
            _RESAVE_ROWS, int(_RESAVE_SHARE * index.saved_rows)
        ):
            self._save(tenant, kind, index, extra or {})

    def _save(self, tenant: str, kind: str, index: Index, extra: dict[str, Any]) -> None:
        """Persists ``index`` if it still reflects the tenant's rows (best effort: a cache)."""
        path = self.index_path(tenant, kind)
        gen = index.generation
        if (
            path is None
            or self._db.in_transaction
            or index.n == 0
            or not isinstance(gen, Generation)
        ):
            return
        if gen == index.saved:
            return
        try:
            arrays, meta = sections_of(index)
        except ValueError:
            return  # a value the format cannot hold: this index stays in memory only
        except IndexFileError:  # a mapped block it would copy is corrupt: the file goes
            path.unlink(missing_ok=True)
            return
        meta.update(
            self._kind_meta(kind, extra),
            format=FORMAT,
            kind=kind,
            tenant=tenant,
            generation=gen.as_meta(),
            marks=self._marks(tenant, index, gen),
        )
        try:
            index_temps.remove_stale_temps(path.parent)
            # written only while the rows still are what it reflects (an erasure of them
            # committed meanwhile: nothing is written, see ``write_temp``)
            tmp = indexfile.write_temp(
                path,
                meta,
                arrays,
                self._file_mode(),
                current=lambda: self._generation(tenant) == gen,
            )
        except (OSError, indexfile.RowsChanged):
            return
        try:
            # installed under the write lock, only while the rows are still what it reflects
            with self._db.write_lock():
                if self._generation(tenant) == gen and self._marks_hold(tenant, meta, gen):
                    indexfile.install(tmp, path)
                    index.saved, index.saved_rows = gen, index.n
        except OSError:
            pass
        finally:
            tmp.unlink(missing_ok=True)

    def save_all(self, texts: dict[str, TenantText], vectors: dict[str, TenantVectors]) -> None:
        """At close: every loaded index that changed since its file."""
        loaded: list[tuple[str, dict[str, Index]]] = [
            ("text", dict(texts)),
            ("vectors", dict(vectors)),
        ]
        for kind, caches in loaded:
            for tenant, index in caches.items():
                if index.generation != index.saved:
                    extra: dict[str, Any] = {}
                    if isinstance(index, TenantVectors):
                        space = self._space_of(tenant)
                        if space is None or space.dimension != index.dimension:
                            continue
                        extra = self._space_meta(space)
                    self._save(tenant, kind, index, extra)

    def refresh_written(self, texts: Container[str], vectors: Container[str]) -> None:
        """At close: files of tenants this process wrote to without loading their index.

        A bulk writer (an import, a CLI session adding many memories) would otherwise
        leave the next reader to catch up every row it added. Rebuilt or caught up and
        saved here once as many rows were added as a loaded index waits for.
        """
        if self.folder is None:
            self.written.clear()
            return
        for tenant in sorted(self.written):
            gen = self._generation(tenant)
            for kind in KINDS:
                if tenant in (texts if kind == "text" else vectors):
                    continue
                path = self.index_path(tenant, kind)
                if path is None:
                    continue
                saved, rows = Generation(), 0
                try:
                    header = IndexFile(path, verify=False).meta
                    saved = Generation.from_meta(header.get("generation"))
                    rows = int(header.get("rows", 0))
                except (IndexFileError, ValueError, TypeError):
                    pass  # no usable file: counted from nothing
                if gen.inserts - saved.inserts < max(_RESAVE_ROWS, int(_RESAVE_SHARE * rows)):
                    continue
                if kind == "text":
                    self.load_text(tenant)
                else:
                    space = self._space_of(tenant)
                    if space is not None:
                        self.load_vectors(tenant, space)
        self.written.clear()

    def _file_mode(self) -> int | None:
        """The database file's permission bits, which its index files take as SQLite's
        -wal and -shm files do: they hold the same texts (created by the umask, 0644, a
        private store's words were readable by every local user)."""
        if self.folder is None:
            return None
        try:
            db = self.folder.with_name(self.folder.name.removesuffix(".idx"))
            return stat.S_IMODE(os.stat(db).st_mode) & 0o666
        except OSError:
            return None

    def _space_of(self, tenant: str) -> EmbeddingSpace | None:
        row = self._db.execute(q.GET_SPACE, {"tenant": tenant}).fetchone()
        return EmbeddingSpace(row["name"], row["dimension"]) if row else None

    def remove_files(self, tenant: str) -> None:
        """A purged tenant's files go with its rows (erasure), and the temporary ones a
        writer killed while saving them left (they hold the same rows)."""
        for kind in KINDS:
            path = self.index_path(tenant, kind)
            if path is not None:
                path.unlink(missing_ok=True)
                index_temps.remove_temps(path)

    def pending_generations(
        self, ops: list[tuple[str, Any]], loaded: Container[str]
    ) -> dict[str, Generation]:
        """Inside a write transaction, before COMMIT: the counters its loaded tenants reach."""
        tenants = {p[0] for op, p in ops if op != "drop"}
        return {t: self._generation(t) for t in tenants if t in loaded}

    def set_generations(
        self,
        gens: dict[str, Generation],
        ops: list[tuple[str, Any]],
        texts: dict[str, TenantText],
        vectors: dict[str, TenantVectors],
    ) -> None:
        """After the pending ops were applied: each loaded index's new generation.

        Only when the counters moved exactly as the ops say (one insert per "text" op,
        one close per "expire"): a change of the rows the ops do not describe leaves the
        index without a generation, so it is never saved (the next load rebuilds).
        """
        for tenant, gen in gens.items():
            inserts = sum(1 for op, p in ops if op == "text" and p[0] == tenant)
            closes = sum(1 for op, p in ops if op == "expire" and p[0] == tenant)
            for index in (texts.get(tenant), vectors.get(tenant)):
                if index is None:
                    continue
                old = index.generation
                moved = isinstance(old, Generation) and (
                    old.epoch in ("", gen.epoch)
                    and gen.inserts == old.inserts + inserts
                    and gen.closes == old.closes + closes
                    and gen.changes == old.changes
                )
                index.generation = gen if moved else None


def sections_of(index: Index) -> tuple[dict[str, Any], dict[str, object]]:
    """The index as the sections of its file and its header values (text_sections.py,
    vector_sections.py); ValueError if a value cannot be stored."""
    if isinstance(index, TenantText):
        return text_sections(index)
    return vector_sections(index)
