"""Re-embedding: move a tenant's vectors to the current embedder, in place and resumably.

What changes: the vector of every memory that has one, and the tenant's recorded
embedding space. What does not: ids, content, entity, category, tags, confidence,
valid and transaction times, statuses, supersession links, signatures, episodes, the
graph and the audit chain (one ``reembed`` entry is appended).

How: the new vectors are first written, batch by batch, to a staging file beside the
store (a small SQLite file, one transaction per batch), so an interrupted run resumes
where it stopped and never leaves the tenant half in one space and half in the other.
A staging file put elsewhere (``staging_path``) is recorded in a list beside the default
one until its last run finishes, so that ``purge_user`` finds the subject's staged vectors
there too.
Then the store swaps every vector and the space together (``Store.replace_vectors``):
readers see the old space or the new one, never both. The staged vectors reach the store
``batch_size`` at a time, read from the staging file as the store asks for the next batch,
so the swap holds one batch of vectors, never the tenant's (~1.5 GB at 1M memories of 384
dimensions). The embedded backend writes every batch in one SQLite transaction;
ArangoDB, whose stream transactions are capped, stages the vectors in bounded batches,
switches the space in one small step and moves the staged vectors into place
afterwards (``store/arango/vectors.py``). Rows written meanwhile by a process still on
the old embedder are found at the swap, embedded, and the swap is tried again; such a
write that would commit after the swap is refused (``Store.hold_embedding_space``: each
write holds the space it embedded with in its own transaction). A backend left between
its switch and the end of that move by a crash (``FinishesMoves``) is in the new space
already; the next run finishes the move.

Replay across the change: ``as_of`` reads (get, list, search, timeline) are unaffected.
A recall replayed with ``as_of`` before the re-embedding ranks with the vectors the
tenant holds now (the old ones are not kept), so its vector scores, and possibly its
order, can differ from what was returned at the time; its text lane and every field of
every returned memory are the same. The audit entry records the instant and both
spaces, so a replay can tell which side of the change it is on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from attestor_arango.config import Config, default_data_dir
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.linefile import create_like, read_lines, store_file, update_lines
from attestor_arango.core.paging import memory_pages
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ConflictError, ValidationError
from attestor_arango.models import Memory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import EmbeddingSpace, MemoryFilter
from attestor_arango.validation import check_path

Progress = Callable[[int, int], None]  # (memories embedded so far, memories to embed)
PAGE = 2_000  # rows per store read while listing the tenant
SWAP_ATTEMPTS = 3


def default_staging_path(config: Config) -> Path:
    """Beside the embedded store's file (resolved: one staging file under every name of
    the store); for ArangoDB, in the user's data directory."""
    if config.backend == "embedded":
        db = config.db_path().resolve()
        return db.with_name(db.name + ".reembed")
    return default_data_dir() / f"reembed-{config.arango.database}.sqlite"


def staging_path(config: Config, given: object) -> Path:
    """Where ``reembed`` stages new vectors: ``given`` (``~`` expanded), else the default.

    The file is deleted when the run finishes, so a given path must be new or a staging
    file already (an interrupted run's): the store's own database given here was deleted
    with it. Raises ``ValidationError`` for that, and for a ``given`` that is no path."""
    if given is None:
        return default_staging_path(config)
    text = check_path(given, "staging_path", "a file path (text without NUL) or None")
    path = Path(text).expanduser()
    own = config.store_files() - {default_staging_path(config).resolve()}
    if path.resolve() in own or (
        (path.exists() or path.is_symlink()) and not _is_staging_file(path)
    ):
        raise ValidationError(
            f"staging_path {text!r:.200} names one of the store's own files or an existing "
            "file that is not a reembed staging file; pass a new path: the staging file is "
            "deleted when the run finishes"
        )
    return path


def _is_staging_file(path: Path) -> bool:
    """Whether ``path`` is a regular SQLite file holding a staging file's tables only."""
    if not path.is_file():
        return False
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        finally:
            db.close()
    except sqlite3.Error:  # not a database at all
        return False
    return {r[0] for r in rows} == {"move", "staged"}


def _registry(config: Config) -> Path:
    """The staging files other than the default that a run may have left (one path a
    line, beside the default file): a purge has no other way to find a ``staging_path``
    given to ``reembed``, and such a file keeps the staged vectors of an unfinished run."""
    default = default_staging_path(config)
    return default.with_name(default.name + ".paths")


def _registered(config: Config) -> list[Path]:
    return [Path(line) for line in read_lines(_registry(config))]


def _lines(paths: list[Path]) -> list[str]:
    return [str(p) for p in sorted(set(paths))]


def register_staging(config: Config, path: Path) -> None:
    """Records ``path`` as a staging file a purge must look into, unless it is the default
    (under the list's lock: a purge rewriting it meanwhile keeps it)."""
    path = path.resolve()
    if path == default_staging_path(config).resolve():
        return

    def add(lines: list[str]) -> list[str]:
        paths = [Path(line) for line in lines]
        return lines if path in paths else _lines([*paths, path])

    update_lines(_registry(config), add, store_file(config))


def drop_staged_everywhere(
    config: Config, tenant: str, ids: Sequence[str] | None = None
) -> list[str]:
    """Removes a tenant's staged vectors (with ``ids``, those rows' only) from the default
    staging file and from every other one a run was given (``register_staging``); a
    registered file left with no run is deleted and forgotten. Returns what could not be
    done, one line a file (a file that is not a staging file, or cannot be written): each
    other file is still done. The list's lock is held from its read to its write, so a file
    registered meanwhile stays registered."""
    problems: list[str] = []
    try:
        drop_staged(default_staging_path(config), tenant, ids)
    except (OSError, sqlite3.Error) as exc:
        problems.append(f"{default_staging_path(config)}: {exc}")
    registry = _registry(config)
    if not registry.exists():  # no file registered; one registered from now on is not lost
        return problems

    def drop(lines: list[str]) -> list[str]:
        keep = []
        for path in (Path(line) for line in lines):
            try:
                if drop_staged(path, tenant, ids):
                    keep.append(path)
                elif path.is_file():  # no unfinished run is left in it: nothing to resume
                    path.unlink()
            except (OSError, sqlite3.Error) as exc:
                problems.append(f"{path}: {exc}")
                keep.append(path)  # looked into again by the next purge
        return _lines(keep)

    try:
        update_lines(registry, drop, store_file(config))
    except OSError as exc:
        problems.append(f"{registry}: {exc}")
    return problems


def unregister_staging(config: Config, path: Path) -> None:
    """Forgets ``path`` once its last run finished (``Staging.finish`` deleted it)."""
    gone = path.resolve()
    if gone not in _registered(config):
        return
    update_lines(
        _registry(config),
        lambda lines: _lines([p for p in map(Path, lines) if p != gone]),
        store_file(config),
    )


def drop_staged(path: Path, tenant: str, ids: Sequence[str] | None = None) -> bool:
    """Removes a tenant's staged vectors (a purge must not leave them in the staging file),
    or with ``ids`` only those rows' (a retention delete, a compaction: the run goes on);
    False once the file holds no unfinished run (a file given to ``reembed`` may then be
    deleted). A file that is no staging file (no ``move`` table) is left as it is."""
    if not path.is_file():
        return False
    db = sqlite3.connect(path)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"staged", "move"} <= tables:  # not ours: nothing of a run in it to remove
            return True
        with db:
            if ids is None:
                removed = db.execute("DELETE FROM staged WHERE tenant = ?", (tenant,)).rowcount
                removed += db.execute("DELETE FROM move WHERE tenant = ?", (tenant,)).rowcount
            else:
                rows = [(tenant, i) for i in ids]
                before = db.total_changes
                db.executemany("DELETE FROM staged WHERE tenant = ? AND id = ?", rows)
                removed = db.total_changes - before
        if removed:
            db.execute("VACUUM")  # no page image of the erased vectors stays in the file
        runs = db.execute("SELECT COUNT(*) FROM move").fetchone()[0]
    finally:
        db.close()
    return bool(runs)


def check_batch(batch_size: object) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError("batch_size must be a positive integer")
    return batch_size


def vector_rows(rt: Runtime, tenant: str) -> list[Memory]:
    """Every memory of the tenant (all namespaces, closed ones too) that carries a vector."""
    scope = Scope(tenant)
    view = TemporalView(as_of=rt.clock.now_us(), include_closed=True)
    out: list[Memory] = []
    for page in memory_pages(rt.store, scope, MemoryFilter(), view, PAGE):
        have = rt.store.get_vectors(scope, [m.id for m in page]) if page else {}
        out.extend(m for m in page if m.id in have)
    return out


class Staging:
    """New vectors already computed for one (tenant, from-space, to-space) move."""

    def __init__(self, path: Path, tenant: str, source: EmbeddingSpace, target: EmbeddingSpace):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.target = target
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS move (tenant TEXT PRIMARY KEY, source TEXT, target TEXT)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS staged (tenant TEXT, id TEXT, vector BLOB, "
            "PRIMARY KEY (tenant, id))"
        )
        self.tenant = tenant
        key = (f"{source.name}/{source.dimension}", f"{target.name}/{target.dimension}")
        row = self._db.execute(
            "SELECT source, target FROM move WHERE tenant = ?", (tenant,)
        ).fetchone()
        with self._db:
            if row is not None and tuple(row) != key:  # a move to another space: start over
                self._db.execute("DELETE FROM staged WHERE tenant = ?", (tenant,))
            self._db.execute("INSERT OR REPLACE INTO move VALUES (?, ?, ?)", (tenant, *key))

    def ids(self) -> set[str]:
        rows = self._db.execute("SELECT id FROM staged WHERE tenant = ?", (self.tenant,))
        return {r[0] for r in rows}

    def add(self, ids: list[str], vectors: np.ndarray) -> None:
        rows = [
            (self.tenant, i, np.asarray(v, dtype=np.float32).tobytes())
            for i, v in zip(ids, vectors, strict=True)
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO staged VALUES (?, ?, ?)", rows)

    def batches(self, ids: set[str], size: int) -> Generator[dict[str, np.ndarray], None, None]:
        """The staged vectors of ``ids`` (rows since deleted are left out), ``size`` at a
        time, read from the file as the store asks for the next batch: the swap holds one
        batch of vectors, not the tenant's. Close it when the store is done (its cursor
        stays open on the staging file until then)."""
        rows = self._db.execute("SELECT id, vector FROM staged WHERE tenant = ?", (self.tenant,))
        while chunk := rows.fetchmany(size):
            batch = {i: np.frombuffer(blob, dtype=np.float32) for i, blob in chunk if i in ids}
            if batch:
                yield batch

    def finish(self) -> None:
        with self._db:
            self._db.execute("DELETE FROM staged WHERE tenant = ?", (self.tenant,))
            self._db.execute("DELETE FROM move WHERE tenant = ?", (self.tenant,))
        left = self._db.execute("SELECT COUNT(*) FROM move").fetchone()[0]
        self._db.close()
        if not left:
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        self._db.close()


@runtime_checkable
class FinishesMoves(Protocol):
    """A backend whose swap runs in steps after its switch of space (ArangoDB), so that a
    crash can leave it switched but not done. Not part of the Store contract."""

    def finish_vector_move(self, scope: Scope) -> EmbeddingSpace | None:
        """Finishes a pending move; the space the tenant left, or None if none was pending."""
        ...


def _finish_pending(rt: Runtime, scope: Scope) -> EmbeddingSpace | None:
    """The space an interrupted move left, once the store finished that move; else None."""
    store = rt.store
    return store.finish_vector_move(scope) if isinstance(store, FinishesMoves) else None


def _label(space: EmbeddingSpace) -> str:
    return f"{space.name} ({space.dimension}-d)"


def _embed_missing(
    rt: Runtime,
    staging: Staging,
    rows: list[Memory],
    batch_size: int,
    progress: Progress | None,
) -> int:
    """Embeds the rows not staged yet, one staged batch at a time; returns how many."""
    done = staging.ids()
    todo = [m for m in rows if m.id not in done]
    total = len(todo)
    if progress is not None:
        progress(0, total)
    for start in range(0, total, batch_size):
        batch = todo[start : start + batch_size]
        vectors = rt.embedder.embed([m.content for m in batch])
        staging.add([m.id for m in batch], vectors)
        if progress is not None:
            progress(min(start + batch_size, total), total)
    return total


def _swap(
    rt: Runtime,
    tenant: str,
    staging_path: Path,
    source: EmbeddingSpace,
    target: EmbeddingSpace,
    batch_size: int,
    progress: Progress | None,
) -> dict[str, int]:
    """Stages what is not staged yet and has the store swap; {memories, embedded, resumed}."""
    register_staging(rt.config, staging_path)
    try:
        create_like(staging_path, rt.config.db_path())  # private when the store is
        staging = Staging(staging_path, tenant, source, target)
    except (OSError, sqlite3.Error) as exc:  # a parent that is a file, no permission, ...
        unregister_staging(rt.config, staging_path)
        raise ValidationError(
            f"staging_path {str(staging_path)!r:.200} cannot be used: {exc}"
        ) from None
    done = {"memories": 0, "embedded": 0, "resumed": 0}
    try:
        done["resumed"] = len(staging.ids())
        for _ in range(SWAP_ATTEMPTS):
            rows = vector_rows(rt, tenant)
            done["embedded"] += _embed_missing(rt, staging, rows, batch_size, progress)
            wanted = {m.id for m in rows}
            batches = staging.batches(wanted, batch_size)
            try:
                replaced = rt.store.replace_vectors(Scope(tenant), target, batches)
            except ConflictError:
                continue  # rows arrived between the listing and the swap: embed them too
            finally:
                batches.close()  # a refused swap read part of them: the cursor ends here
            done["memories"] = replaced
            break
        else:
            raise ConflictError(
                f"tenant {tenant!r} kept changing during {SWAP_ATTEMPTS} swap attempts; "
                "the staged vectors are kept: run reembed again when writes pause"
            )
        staging.finish()
        if not staging_path.exists():
            unregister_staging(rt.config, staging_path)
    finally:
        staging.close()
    return done


def _forget_staged(
    rt: Runtime, tenant: str, staging_path: Path, source: EmbeddingSpace, target: EmbeddingSpace
) -> None:
    """Removes what an interrupted run staged for a move its store has finished since."""
    if not staging_path.is_file():
        return
    staging = Staging(staging_path, tenant, source, target)
    try:
        staging.finish()
    finally:
        staging.close()
    if not staging_path.exists():
        unregister_staging(rt.config, staging_path)


def reembed(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    staging_path: Path,
    *,
    batch_size: int = 256,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Moves the context's tenant to ``rt.embedder``; see the module docstring.

    Returns ``{"tenant", "from", "to", "memories", "embedded", "resumed", "status"}``;
    status is ``"current"`` (already in that space), ``"empty"`` (no vectors yet) or
    ``"reembedded"`` (also when this run only finished a move an interrupted run had
    switched). Raises ``ConflictError`` if writers kept changing the tenant through every
    swap attempt (run it again).
    """
    batch_size = check_batch(batch_size)
    if progress is not None and not callable(progress):  # refused before a file is made
        raise ValidationError("progress must be a callable (done, total) or None")
    scope = Scope(ctx.tenant)
    target = EmbeddingSpace(rt.embedder.name, rt.embedder.dimension)
    source = rt.store.get_embedding_space(scope)
    report: dict[str, Any] = {
        "tenant": ctx.tenant,
        "from": None if source is None else _label(source),
        "to": _label(target),
        "memories": 0,
        "embedded": 0,
        "resumed": 0,
    }
    if source is None:
        return {**report, "status": "empty"}
    if source == target:
        left = _finish_pending(rt, scope)  # a run stopped after the store's switch
        if left is None:
            return {**report, "status": "current"}
        report["from"] = _label(left)
        report["memories"] = len(vector_rows(rt, ctx.tenant))
        _forget_staged(rt, ctx.tenant, staging_path, left, target)
    else:
        report.update(_swap(rt, ctx.tenant, staging_path, source, target, batch_size, progress))
    auditor.record(
        ctx,
        "reembed",
        ctx.tenant,
        {"from": report["from"], "to": report["to"], "memories": report["memories"]},
    )
    return {**report, "status": "reembedded"}
