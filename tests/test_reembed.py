"""Issue 18 item 2: ``reembed`` moves a tenant to the current embedder in place, resumably.

Nothing a row asserts changes (every field of every version, transaction times included),
only the vectors and the tenant's embedding space; an interrupted run leaves the tenant
wholly in the old space and the next run resumes from the staged vectors.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from interface_support import PYTHON, cli_env

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder, LocalMiniLMEmbedder
from attestor_arango.errors import AccessDenied, ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

FACTS = [
    ("alice", "role", "Alice is the engineering manager"),
    ("bob", "diet", "Bob is allergic to peanuts"),
    ("carol", "home", "Carol moved to Lisbon last spring"),
    ("dave", "pet", "Dave adopted a golden retriever puppy"),
]


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


def _fill(path: Path, clock: ManualClock) -> str:
    with AgentMemory(path, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)) as mem:
        for entity, category, text in FACTS:
            mem.add(text, entity=entity, category=category)
            clock.advance(seconds=1)
        mem.add("Carol moved to Porto this winter", entity="carol", category="home")  # supersedes
        clock.advance(seconds=1)
        doomed = mem.add("a note to forget", entity="tmp", category="tmp")
        mem.forget(doomed.id)
        clock.advance(seconds=1)
        return doomed.id


def _rows(mem: AgentMemory) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in mem.list(status="all", limit=1000)]


def _open(path: Path, clock: ManualClock, embedder: Any) -> AgentMemory:
    return AgentMemory(path, embedder=embedder, clock=clock, ids=SeededIdSource(4))


def test_reembed_moves_the_space_and_changes_nothing_asserted(
    tmp_path: Path, clock: ManualClock, minilm: LocalMiniLMEmbedder
) -> None:
    db = tmp_path / "m.db"
    _fill(db, clock)
    with _open(db, clock, minilm) as mem:
        before_rows = _rows(mem)
        before_search = [m.id for m in mem.search("Carol", status="all")]
        stale = mem.recall("who got a new dog?")
        assert "embedding_space" in stale.errors
        seen: list[tuple[int, int]] = []
        report = mem.reembed(batch_size=2, progress=lambda d, t: seen.append((d, t)))
        assert report["status"] == "reembedded" and report["memories"] == 6
        assert report["from"] == "hashing-v1-64 (64-d)"
        assert report["to"] == "minilm-l6-v2-int8-onnx (384-d)"
        assert seen[0] == (0, 6) and seen[-1] == (6, 6)
        space = mem.store.get_embedding_space(Scope("local"))
        assert space is not None and (space.name, space.dimension) == (minilm.name, 384)
        assert _rows(mem) == before_rows  # every version, every field, every time
        assert [m.id for m in mem.search("Carol", status="all")] == before_search
        fresh = mem.recall("who got a new dog?")
        assert fresh.errors == {}
        assert fresh.results[0].memory.entity == "dave"
        ids = [r["id"] for r in before_rows]
        vectors = mem.store.get_vectors(Scope("local"), ids)
        assert len(vectors) == 6
        expected = minilm.embed([r["content"] for r in before_rows])
        for row, want in zip(before_rows, expected, strict=True):
            np.testing.assert_allclose(vectors[row["id"]], want, atol=1e-6)
        last = mem.audit_log(limit=1000)[-1]
        assert last.action == "reembed" and last.details["memories"] == 6
        assert mem.verify_audit_chain().ok
        mem.add("Erin repairs vintage motorcycles", entity="erin", category="job")  # writes work
        assert mem.reembed()["status"] == "current"
    assert not (tmp_path / "m.db.reembed").exists()


def test_an_interrupted_reembed_keeps_the_old_space_and_resumes(
    tmp_path: Path, clock: ManualClock, minilm: LocalMiniLMEmbedder
) -> None:
    db = tmp_path / "m.db"
    _fill(db, clock)

    def stop_after_first_batch(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with _open(db, clock, minilm) as mem:
        before_rows = _rows(mem)
        with pytest.raises(KeyboardInterrupt):
            mem.reembed(batch_size=2, progress=stop_after_first_batch)
        space = mem.store.get_embedding_space(Scope("local"))
        assert space is not None and space.name == "hashing-v1-64"  # not half moved
        assert "embedding_space" in mem.recall("dog").errors
        assert (tmp_path / "m.db.reembed").exists()
    with _open(db, clock, HashingEmbedder(64)) as old:  # the old embedder still works
        assert old.recall("Alice").errors == {}
    with _open(db, clock, minilm) as mem:
        report = mem.reembed(batch_size=2)
        assert report["resumed"] == 2 and report["embedded"] == 4 and report["memories"] == 6
        assert _rows(mem) == before_rows
        assert mem.recall("who got a new dog?").errors == {}


def test_reembed_picks_up_rows_written_by_an_old_process_during_the_run(
    tmp_path: Path, clock: ManualClock, minilm: LocalMiniLMEmbedder
) -> None:
    db = tmp_path / "m.db"
    _fill(db, clock)
    writer = _open(db, clock, HashingEmbedder(64))
    wrote: list[str] = []

    def write_once(done: int, total: int) -> None:
        if done == total and not wrote:
            wrote.append(writer.add("Frank plays the cello", entity="frank", category="x").id)

    with _open(db, clock, minilm) as mem:
        report = mem.reembed(batch_size=3, progress=write_once)
        assert report["memories"] == 7 and wrote
        assert wrote[0] in mem.store.get_vectors(Scope("local"), wrote)
    writer.close()


def test_reembed_is_an_orchestrator_operation(
    tmp_path: Path, clock: ManualClock, minilm: LocalMiniLMEmbedder
) -> None:
    db = tmp_path / "m.db"
    _fill(db, clock)
    researcher = AgentContext(agent_id="r1", role=AgentRole.RESEARCHER)
    with _open(db, clock, minilm) as mem:
        with pytest.raises(AccessDenied):
            mem.reembed(context=researcher)
        with pytest.raises(ValidationError, match="batch_size"):
            mem.reembed(batch_size=0)
        space = mem.store.get_embedding_space(Scope("local"))
        assert space is not None and space.name == "hashing-v1-64"


def test_an_empty_tenant_has_nothing_to_move(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path / "m.db", clock, HashingEmbedder(64)) as mem:
        assert mem.reembed()["status"] == "empty"


def test_reembed_through_the_cli_pipe(tmp_path: Path) -> None:
    store = tmp_path / "store.db"

    def run(*args: str, embedder: str) -> subprocess.CompletedProcess[str]:
        env = cli_env(tmp_path, ATTESTOR_PATH=str(store), ATTESTOR_EMBEDDER=embedder)
        return subprocess.run(
            [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )

    for _, _, text in FACTS:
        assert run("add", text, embedder="hashing").returncode == 0
    stale = run("recall", "who got a new dog?", "--json", embedder="local")
    assert "reembed" in json.loads(stale.stdout)["errors"]["embedding_space"]
    done = run("reembed", "--json", embedder="local")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "reembedded" and report["memories"] == 4
    fresh = json.loads(run("recall", "who got a new dog?", "--json", embedder="local").stdout)
    assert fresh["errors"] == {} and "Dave" in fresh["results"][0]["memory"]["content"]


def test_a_purge_removes_the_tenants_staged_vectors(
    tmp_path: Path, clock: ManualClock, minilm: LocalMiniLMEmbedder
) -> None:
    db = tmp_path / "m.db"
    _fill(db, clock)

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with _open(db, clock, minilm) as mem:
        with pytest.raises(KeyboardInterrupt):
            mem.reembed(batch_size=2, progress=stop)
        staged = tmp_path / "m.db.reembed"
        assert staged.exists()
        assert mem.purge_user("local", "GDPR erasure request #1").ok
        with sqlite3.connect(staged) as check:
            assert check.execute("SELECT COUNT(*) FROM staged").fetchone()[0] == 0


def test_a_purge_removes_the_tenants_vectors_staged_at_a_path_given_to_reembed(
    tmp_path: Path, clock: ManualClock
) -> None:
    """``staging_path`` puts an unfinished run's vectors anywhere; the purge finds them
    there too (the run recorded the path beside the store), and a finished run forgets it."""
    db, staged = tmp_path / "m.db", tmp_path / "elsewhere" / "stage.sqlite"
    _fill(db, clock)

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with _open(db, clock, HashingEmbedder(32)) as mem:
        with pytest.raises(KeyboardInterrupt):
            mem.reembed(batch_size=2, progress=stop, staging_path=staged)
        with sqlite3.connect(staged) as check:
            assert check.execute("SELECT COUNT(*) FROM staged").fetchone()[0] == 2  # premise
        assert mem.purge_user("local", "GDPR erasure request #1").ok
        assert not staged.exists()
        assert [p.name for p in tmp_path.iterdir() if ".reembed" in p.name] == []
    _fill(db, clock)
    with _open(db, clock, HashingEmbedder(32)) as mem:
        assert mem.reembed(batch_size=2, staging_path=staged)["status"] == "reembedded"
    assert [p.name for p in tmp_path.iterdir() if ".reembed" in p.name] == []
    assert not staged.exists()


def test_a_staging_file_the_purge_cannot_clean_fails_the_purge_and_the_rest_is_done(
    tmp_path: Path, clock: ManualClock
) -> None:
    """A listed staging file that is no SQLite file any more (overwritten, or a folder now)
    cannot be cleaned: the purge says so (``ok=false``, the file named, the outcome entry
    ``purge_failed``) instead of raising after its outcome entry, keeps the file listed
    for the next purge, and still cleans every other staging file."""
    db, broken, fine = tmp_path / "m.db", tmp_path / "a" / "s.sqlite", tmp_path / "b" / "s.sqlite"
    _fill(db, clock)

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with _open(db, clock, HashingEmbedder(32)) as mem:
        for path in (broken, fine):
            with pytest.raises(KeyboardInterrupt):
                mem.reembed(batch_size=2, progress=stop, staging_path=path)
        broken.write_bytes(b"not a database " * 100)

        report = mem.purge_user("local", "GDPR erasure request #1")

        assert not report.ok and str(broken) in (report.error or ""), report.to_dict()
        assert mem.audit_log(limit=1000)[-1].action == "purge_failed"
        assert not fine.exists()
        registry = (tmp_path / "m.db.reembed.paths").read_text(encoding="utf-8").split()
        assert registry == [str(broken.resolve())]


@pytest.mark.parametrize("where", ["default", "given"])
def test_a_compaction_removes_the_vectors_staged_for_the_rows_it_removes(
    tmp_path: Path, clock: ManualClock, where: str
) -> None:
    """A row a compaction removes leaves no vector in an unfinished run's staging file (a
    vector of its text, from which the text can be guessed at); the run still resumes."""
    db = tmp_path / "m.db"
    staged = tmp_path / "m.db.reembed" if where == "default" else tmp_path / "x" / "s.sqlite"
    doomed = _fill(db, clock)

    def stop_when_all_staged(done: int, total: int) -> None:
        if total and done >= total:
            raise KeyboardInterrupt

    def staged_ids() -> set[str]:
        with sqlite3.connect(staged) as check:
            return {r[0] for r in check.execute("SELECT id FROM staged")}

    with _open(db, clock, HashingEmbedder(32)) as mem:
        given = None if where == "default" else staged
        with pytest.raises(KeyboardInterrupt):
            mem.reembed(batch_size=2, progress=stop_when_all_staged, staging_path=given)
        assert doomed in staged_ids() and len(staged_ids()) == 6  # the premise
        clock.advance(days=2)

        assert mem.compact(older_than="1d")["removed"] == 1

        assert doomed not in staged_ids() and len(staged_ids()) == 5
        assert doomed.encode() not in staged.read_bytes()
        report = mem.reembed(batch_size=2, staging_path=given)
        assert report["resumed"] == 5 and report["memories"] == 5


def test_a_purge_leaves_alone_a_listed_path_that_holds_another_database_now(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The path a finished-or-not run was given may hold something else by the time of the
    purge (the user reused it): a SQLite file without the staging tables is not deleted,
    nor rewritten, and stays listed."""
    db, path = tmp_path / "m.db", tmp_path / "x" / "s.sqlite"
    _fill(db, clock)

    def stop(done: int, total: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt

    with _open(db, clock, HashingEmbedder(32)) as mem:
        with pytest.raises(KeyboardInterrupt):
            mem.reembed(batch_size=2, progress=stop, staging_path=path)
        path.unlink()
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE notes (tenant TEXT, body TEXT)")
            other.execute("INSERT INTO notes VALUES ('local', 'keep me')")
        other.close()
        before = path.read_bytes()

        assert mem.purge_user("local", "GDPR erasure request #1").ok

        assert path.read_bytes() == before
    assert (tmp_path / "m.db.reembed.paths").read_text(encoding="utf-8").split() == [
        str(path.resolve())
    ]


def test_a_run_finishes_a_move_a_backend_left_after_its_switch(
    tmp_path: Path, clock: ManualClock
) -> None:
    """A backend that swaps in steps after switching the space (ArangoDB) and was stopped
    between them is already in the new space; the next run finishes the move and records
    it, instead of answering "current" and leaving it unfinished."""
    from attestor_arango.store.protocol import EmbeddingSpace

    db = tmp_path / "m.db"
    _fill(db, clock)
    left = EmbeddingSpace("older-model", 32)
    with _open(db, clock, HashingEmbedder(64)) as mem:
        staged = tmp_path / "m.db.reembed"
        staged.write_bytes(b"")  # what the interrupted run staged (its file, emptied here)
        finished: list[Scope] = []

        def finish(scope: Scope) -> EmbeddingSpace | None:
            finished.append(scope)
            return left if len(finished) == 1 else None

        mem.store.finish_vector_move = finish  # type: ignore[attr-defined]
        entries = len(mem.audit_log(limit=1000))
        report = mem.reembed()
        assert report["status"] == "reembedded" and finished == [Scope("local")]
        assert report["from"] == "older-model (32-d)" and report["to"] == "hashing-v1-64 (64-d)"
        assert report["memories"] == 6 and report["embedded"] == 0
        trail = mem.audit_log(limit=1000)
        assert len(trail) == entries + 1 and trail[-1].action == "reembed"
        assert not staged.exists()
        assert mem.reembed()["status"] == "current"  # nothing pending any more
        del mem.store.finish_vector_move  # type: ignore[attr-defined]
        assert mem.reembed()["status"] == "current"  # the embedded backend: as before


class _RenamedHashing(HashingEmbedder):
    """Another embedder of the same dimension: a re-embedding to it passes every
    dimension check, only the space's name tells the two apart."""

    def __init__(self) -> None:
        super().__init__(64)
        self.name = "renamed-hashing-64"


def test_a_write_embedded_before_a_reembedding_switched_the_space_is_refused(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The late writer: a process on the old embedder reads the tenant's space, embeds,
    and meanwhile a re-embedding moves the tenant to a new space of the same dimension. Its
    old-space vector must not land beside the new ones (vector search would rank the two
    spaces together); the write fails with nothing stored, as one made after the switch."""
    from attestor_arango.errors import EmbeddingMismatchError

    db = tmp_path / "m.db"
    _fill(db, clock)
    pending: list[Any] = []

    class OldEmbedderRacingAReembed(HashingEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            vectors = super().embed(texts)
            while pending:  # the re-embedding finishes while this write embeds
                pending.pop()()
            return vectors

    with _open(db, clock, OldEmbedderRacingAReembed(64)) as writer:
        before = _rows(writer)

        def reembed() -> None:
            with _open(db, clock, _RenamedHashing()) as mover:
                assert mover.reembed()["status"] == "reembedded"

        pending.append(reembed)
        with pytest.raises(EmbeddingMismatchError, match="renamed-hashing-64"):
            writer.add("Frank plays the cello", entity="frank", category="x")
        assert not pending and _rows(writer) == before  # nothing was written
        space = writer.store.get_embedding_space(Scope("local"))
        assert space is not None and space.name == "renamed-hashing-64"
