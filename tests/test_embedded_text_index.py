"""The embedded text index: BM25 over exactly the view, kept in step with the file."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango.clock import OPEN, from_us
from attestor_arango.errors import TenantLeakError, ValidationError
from attestor_arango.models import Memory, Provenance, content_hash
from attestor_arango.retrieval.text_lane import rescore_pool
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.embedded.text_index import query_terms
from attestor_arango.text.stemming import scoring_terms, stem, words

T0 = 1_767_225_600_000_000
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "running", "runs", "the"]


def _memory(scope: Scope, i: int, text: str, t: int, valid_from: int | None = None) -> Memory:
    return Memory(
        id=f"m{9999 - i:04d}",  # ids run against insertion order: ties show in the tie-break
        tenant=scope.tenant,
        namespace=scope.namespace or "n",
        content=text,
        valid_from=from_us(valid_from if valid_from is not None else t),
        t_created=from_us(t),
        provenance=Provenance(agent_id="a", role="planner"),
        content_hash=content_hash(text),
    )


def _reference(
    rows: list[tuple[Memory, int]], scope: Scope, query: str, k: int, view: TemporalView
) -> list[tuple[str, float]]:
    """BM25 written out by hand over the rows the view sees (rows: memory, t_expired)."""
    seen = []
    for m, t_expired in rows:
        if m.tenant != scope.tenant or (scope.namespace and m.namespace != scope.namespace):
            continue
        created = m.us("t_created")
        if not (created <= view.as_of and t_expired > view.t_expired_after):
            continue
        if view.window is not None and not (
            m.us("valid_from") < view.window_end and m.us("valid_until") > view.window_start
        ):
            continue
        seen.append((m, [stem(w) for w in words(m.content)]))
    terms = query_terms(query)
    if not seen or not terms:
        return []
    n = len(seen)
    avgdl = sum(len(toks) for _, toks in seen) / n
    df = {t: sum(1 for _, toks in seen if t in toks) for t in terms}
    scored = []
    for m, toks in seen:
        score, hit = 0.0, False
        for t in terms:
            f = toks.count(t)
            if f:
                hit = True
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * f * (1.2 + 1) / (f + 1.2 * (1 - 0.75 + 0.75 * len(toks) / avgdl))
        if hit:
            scored.append((score, m.us("t_created"), m.id))
    scored.sort(key=lambda p: (-p[0], -p[1], p[2]))
    return [(mid, s) for s, _, mid in scored[:k]]


def _fill(store: SQLiteStore, rng: random.Random, n: int) -> list[tuple[Memory, int]]:
    scopes = [Scope("big", "n"), Scope("small", "n"), Scope("small", "other")]
    rows: list[tuple[Memory, int]] = []
    for i in range(n):
        scope = scopes[0] if i % 7 else scopes[1 + (i // 7) % 2]
        # few distinct texts, so many rows tie on their score
        text = " ".join(rng.choices(WORDS[: 3 + i % 6], k=rng.randint(1, 5)))
        m = _memory(scope, i, text, T0 + i, valid_from=T0 + rng.randint(0, 2 * n))
        store.insert_memory(scope, m, None)
        rows.append((m, OPEN))
    for i in rng.sample(range(n), n // 10):  # some rows closed, at various times
        m, _ = rows[i]
        t = T0 + n + i
        store.close_memory(Scope(m.tenant, m.namespace), m.id, t, "archived", None)
        rows[i] = (m, t)
    return rows


VIEWS = [
    TemporalView(as_of=T0 + 10_000),
    TemporalView(as_of=T0 + 150),
    TemporalView(as_of=T0 + 10_000, include_closed=True),
    TemporalView(as_of=T0 + 10_000, window=(T0 + 100, T0 + 300)),
]
SCOPES = [
    Scope("big", "n"),
    Scope("small", "n"),
    Scope("small", "other"),
    Scope("small"),
    Scope("nobody"),
]


def test_pool_is_bm25_over_exactly_the_view(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    rows = _fill(store, random.Random(5), 400)
    for scope in SCOPES:
        for view in VIEWS:
            for query in ("alpha", "gamma omega", "run kappa the", "The beta!", "zzz"):
                for k in (1, 3, 10, 500):
                    got = [(t.id, t.score) for t in store.text_pool(scope, query, k, view)]
                    assert got == _reference(rows, scope, query, k, view), (scope, view, query, k)
    store.close()


def test_the_index_keeps_each_rows_scoring_terms_and_rescores_alike_without_them(
    tmp_path: Path,
) -> None:
    """The index hands each row's scoring terms to re-scoring; they must be the content's."""
    store = SQLiteStore(tmp_path / "m.db")
    scope = Scope("t", "n")
    texts = [
        "The others ran to the other side",  # "other" is a stop word, "others" is not
        "Doing it: she does what others did, being one of ours",
        "Ana's running runs; ﬁle the ﬁles",
        "others others OTHERS",
        "nothing to see here",
    ]
    for i, text in enumerate(texts):
        store.insert_memory(scope, _memory(scope, i, text, T0 + i), None)
    view = TemporalView(as_of=T0 + 100)
    for query in ("others", "run files", "doing others"):
        pool = store.text_pool(scope, query, 10, view)
        assert pool
        held = store.scoring_terms(scope, [t.id for t in pool])
        assert held == {t.id: scoring_terms(t.content) for t in pool}
        assert rescore_pool(pool, query, held=held) == rescore_pool(pool, query)
    store.close()


def test_incremental_updates_answer_like_a_fresh_load(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SQLiteStore(path)
    rng = random.Random(11)
    store.text_pool(SCOPES[0], "alpha", 5, VIEWS[0])  # load the caches, then keep writing
    store.text_pool(SCOPES[1], "alpha", 5, VIEWS[0])
    _fill(store, rng, 300)
    assert set(store.cached_tenants()) == {"big", "small"}
    fresh = SQLiteStore(path)
    for scope in SCOPES:
        for view in VIEWS:
            for query in ("alpha beta", "delta", "runs"):
                assert store.text_pool(scope, query, 20, view) == fresh.text_pool(
                    scope, query, 20, view
                )
    store.close()
    fresh.close()


def test_a_replay_chooses_the_same_pool_after_more_rows_arrive(tmp_path: Path) -> None:
    """More matches than the pool holds: later rows must not change an earlier view's pool."""
    store = SQLiteStore(tmp_path / "m.db")
    scope = Scope("t", "n")
    rng = random.Random(3)
    for i in range(300):
        text = " ".join(rng.choices(["alpha", "beta", "gamma", "filler", "words"], k=6))
        store.insert_memory(scope, _memory(scope, i, text, T0 + i), None)
    then = TemporalView(as_of=T0 + 299)
    before = store.text_pool(scope, "alpha beta", 50, then)
    assert len(before) == 50
    # later rows (and another tenant's) shift every global statistic of the query terms
    for i in range(300, 900):
        later = Scope("t", "n") if i % 2 else Scope("other", "n")
        store.insert_memory(later, _memory(later, i, "alpha alpha " * (i % 5 + 1), T0 + i), None)
    assert store.text_pool(scope, "alpha beta", 50, then) == before
    assert SQLiteStore(tmp_path / "m.db").text_pool(scope, "alpha beta", 50, then) == before
    store.close()


def test_another_process_write_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    scope = Scope("t", "n")
    reader.insert_memory(scope, _memory(scope, 1, "alpha one", T0), None)
    view = TemporalView(as_of=T0 + 100)
    assert [t.content for t in reader.text_pool(scope, "alpha", 5, view)] == ["alpha one"]
    writer.insert_memory(scope, _memory(scope, 2, "alpha two alpha", T0 + 1), None)
    writer.close_memory(scope, "m9998", T0 + 2, "archived", None)
    assert [t.content for t in reader.text_pool(scope, "alpha", 5, view)] == ["alpha two alpha"]
    reader.close()
    writer.close()


def test_purge_empties_the_text_cache(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    scope = Scope("gone", "n")
    store.insert_memory(scope, _memory(scope, 1, "secret words", T0), None)
    assert store.text_pool(scope, "secret", 5, VIEWS[0])
    assert store.tenant_residue(scope)["text_cache"] == 1
    store.purge_tenant(scope)
    assert store.tenant_residue(scope)["text_cache"] == 0
    assert "gone" not in store.cached_tenants()
    assert store.text_pool(scope, "secret", 5, VIEWS[0]) == []
    store.close()


def test_the_fts5_index_stays_available_and_unknown_ones_are_refused(tmp_path: Path) -> None:
    scope = Scope("t", "n")
    fts = SQLiteStore(tmp_path / "m.db", text_index="fts5")
    fts.insert_memory(scope, _memory(scope, 1, "alpha beta", T0), None)
    assert [t.id for t in fts.text_pool(scope, "alpha", 5, VIEWS[0])] == ["m9998"]
    assert fts.cached_tenants() == []  # FTS5 holds no tenant's words in memory
    fts.close()
    with pytest.raises(ValidationError, match="unknown text index"):
        SQLiteStore(tmp_path / "m.db", text_index="lucene")


@pytest.mark.parametrize("lane", ["text_pool", "text_pool_scores"])
def test_a_row_of_another_namespace_is_refused_not_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lane: str
) -> None:
    """Defence in depth: if the view filter ever let another namespace through, the store
    raises; the pool scored by the store (beside the contract) as the contract's pool."""
    store = SQLiteStore(tmp_path / "m.db")
    mine, theirs = Scope("t", "mine"), Scope("t", "theirs")
    here = _memory(mine, 1, "alpha here", T0)
    store.insert_memory(mine, here, None)
    store.insert_memory(theirs, _memory(theirs, 2, "alpha there", T0), None)
    found = getattr(store, lane)(mine, "alpha", 5, VIEWS[0])
    ids = found.ids if lane == "text_pool_scores" else [t.id for t in found]
    assert ids == [here.id]
    broken = RowTable.visible_mask

    def everything(self: RowTable, namespace: str | None, view: TemporalView) -> Any:
        return broken(self, None, view)

    monkeypatch.setattr(RowTable, "visible_mask", everything)
    with pytest.raises(TenantLeakError):
        getattr(store, lane)(mine, "alpha", 5, VIEWS[0])
    store.close()


def test_concurrent_writes_and_reads_leave_the_caches_as_a_fresh_load(tmp_path: Path) -> None:
    """Writers, a closer and readers share one store; the caches end as a reload sees them."""
    import threading

    path = tmp_path / "m.db"
    store = SQLiteStore(path)
    scope = Scope("t", "n")
    view = TemporalView(as_of=T0 + 10**9)
    store.insert_memory(scope, _memory(scope, 0, "alpha seed", T0), None)
    store.text_pool(scope, "alpha", 5, view)  # caches loaded before the threads start
    errors: list[BaseException] = []

    def writer(offset: int) -> None:
        try:
            rng = random.Random(offset)
            for i in range(offset, offset + 60):
                m = _memory(scope, i, " ".join(rng.choices(WORDS, k=4)), T0 + i)
                store.insert_memory(scope, m, None)
                if i % 7 == 0:
                    store.close_memory(scope, m.id, T0 + i + 1, "archived", None)
        except BaseException as exc:  # reported below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(60):
                store.text_pool(scope, "alpha gamma", 20, view)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in (100, 200, 300)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fresh = SQLiteStore(path)
    for query in ("alpha", "gamma omega", "runs the"):
        for v in (view, TemporalView(as_of=T0 + 10**9, include_closed=True)):
            assert store.text_pool(scope, query, 500, v) == fresh.text_pool(scope, query, 500, v)
    assert store.tenant_residue(scope)["text_cache"] == 181
    store.close()
    fresh.close()


def test_caches_hold_at_most_cache_rows_dropping_the_least_recently_read_tenant(
    tmp_path: Path,
) -> None:
    import numpy as np

    from attestor_arango.store.protocol import EmbeddingSpace

    path = tmp_path / "m.db"
    store = SQLiteStore(path, cache_rows=50)
    rng = np.random.default_rng(1)
    tenants = [Scope(name, "n") for name in ("a", "b", "c")]
    for n, scope in enumerate(tenants):
        store.set_embedding_space(scope, EmbeddingSpace("test", 4))
        for i in range(30):
            m = _memory(scope, 100 * n + i, f"alpha {scope.tenant} {i}", T0 + i)
            store.insert_memory(scope, m, rng.normal(size=4).astype(np.float32))
    view = VIEWS[0]
    query = np.ones(4, dtype=np.float32)

    def read(scope: Scope) -> tuple[list[object], list[object]]:
        hits = store.vector_candidates(scope, query, 5, view)
        return store.text_pool(scope, "alpha", 5, view), [(h.memory.id, h.score) for h in hits]

    first = {s.tenant: read(s) for s in tenants[:1]}
    assert store.cached_tenants() == ["a"]
    read(tenants[1])  # 60 rows > 50: "a", read least recently, goes
    assert store.cached_tenants() == ["b"]
    assert read(tenants[0]) == first["a"]  # loaded again, same answers
    assert store.cached_tenants() == ["a"]
    # rows written into a cached tenant count too: a read of another tenant drops "a"
    small = SQLiteStore(path, cache_rows=80)
    small.text_pool(tenants[0], "alpha", 5, view)
    small.text_pool(tenants[1], "alpha", 5, view)
    assert small.cached_tenants() == ["a", "b"]  # 60 rows
    for i in range(30, 60):
        small.insert_memory(tenants[0], _memory(tenants[0], i, f"alpha a {i}", T0 + i), None)
    small.text_pool(tenants[1], "alpha", 5, view)  # a cache hit; 90 rows held > 80
    assert small.cached_tenants() == ["b"]
    big = SQLiteStore(path, cache_rows=1)  # a tenant larger than the limit is still served
    assert big.text_pool(tenants[2], "alpha", 5, view) == SQLiteStore(path).text_pool(
        tenants[2], "alpha", 5, view
    )
    assert big.cached_tenants() == ["c"]
    with pytest.raises(ValidationError, match="cache_rows"):
        SQLiteStore(path, cache_rows=0)
    store.close()


def test_rows_are_read_by_rowid_once_known_and_a_wrong_rowid_cannot_mislead(
    tmp_path: Path,
) -> None:
    """get_memories reads by the rowid the text index keeps; what it returns never depends on it."""
    path = tmp_path / "m.db"
    store = SQLiteStore(path)
    a, b = Scope("a", "n"), Scope("b", "n")
    for i in range(6):
        store.insert_memory(a, _memory(a, i, f"alpha row {i}", T0 + i), None)
        store.insert_memory(b, _memory(b, 100 + i, f"alpha other {i}", T0 + i), None)
    ids = [f"m{9999 - i:04d}" for i in range(6)]
    cold = store.get_memories(a, ids)  # no text index loaded yet: by id
    store.text_pool(a, "alpha", 5, VIEWS[0])  # loads a's index (rowids from the file)
    store.insert_memory(a, _memory(a, 6, "alpha late", T0 + 6), None)  # rowid from the insert
    ids.append("m9993")
    texts = store.caches.texts["a"]
    on_file = dict(store.db.conn.execute("SELECT id, rowid FROM memories WHERE tenant = 'a'"))
    assert texts.rowids_of(ids) == {i: on_file[i] for i in ids}
    warm = store.get_memories(a, ids)
    assert {i: warm[i] for i in cold} == cold and set(warm) == set(ids)
    # point every row at another tenant's row, or at another row of its own tenant
    foreign = list(
        dict(store.db.conn.execute("SELECT id, rowid FROM memories WHERE tenant = 'b'")).values()
    )
    for wrong in (
        [foreign[k % 6] for k in range(7)],
        [on_file[ids[(k + 1) % 7]] for k in range(7)],
    ):
        for k, memory_id in enumerate(ids):
            texts.rowids[texts.rows.row_of(memory_id)] = wrong[k]
        assert store.get_memories(a, ids) == warm
        assert store.get_memories(a, ids[:3]) == {i: warm[i] for i in ids[:3]}
    assert store.get_memories(a, ["m9899"]) == {}  # b's row asked for by a: not found
    store.close()


def test_scoring_terms_stay_within_the_scope(tmp_path: Path) -> None:
    """Beside the contract, but scoped like it: another namespace's or tenant's rows, and
    rows of an index not loaded yet, give no terms."""
    store = SQLiteStore(tmp_path / "m.db")
    a, other_ns, b = Scope("a", "n"), Scope("a", "x"), Scope("b", "n")
    store.insert_memory(a, _memory(a, 0, "alpha running", T0), None)
    store.insert_memory(other_ns, _memory(other_ns, 1, "alpha runs", T0 + 1), None)
    store.insert_memory(b, _memory(b, 2, "alpha beta", T0 + 2), None)
    ids = ["m9999", "m9998", "m9997"]
    assert store.scoring_terms(a, ids) == {}  # no text index loaded yet
    store.text_pool(a, "alpha", 5, TemporalView(as_of=T0 + 10))
    assert store.scoring_terms(a, ids) == {"m9999": scoring_terms("alpha running")}
    assert set(store.scoring_terms(Scope("a"), ids)) == {"m9999", "m9998"}
    assert store.scoring_terms(b, ids) == {}  # b's index is not loaded; a's never answers b
    store.text_pool(b, "alpha", 5, TemporalView(as_of=T0 + 10))
    assert store.scoring_terms(b, ids) == {"m9997": scoring_terms("alpha beta")}
    store.close()


def test_rows_in_a_namespace_filter_as_a_check_per_row_would() -> None:
    table = RowTable(capacity=4)
    rng = random.Random(2)
    names = [rng.choice(["a", "b", "c"]) for _ in range(50)]
    for i, ns in enumerate(names):
        table.append(f"id{i}", ns, (T0, OPEN, T0, OPEN))
    asked = [f"id{i}" for i in rng.sample(range(60), 40)]  # some not held
    found = table.rows_of(asked)
    assert table.in_namespace(found, None) == found
    assert table.in_namespace([], "a") == []
    assert table.in_namespace(found, "nowhere") == []
    for ns in ("a", "b", "c"):
        assert table.in_namespace(found, ns) == [(i, r) for i, r in found if names[r] == ns]


def test_dense_and_sorted_per_row_sums_score_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many hits per row take one dense array instead of a sort of the hits: the same
    rows, the same float scores (parts added in the same order), the same ranking."""
    from attestor_arango.store.embedded import text_index, text_rank

    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "river", "stone", "music", "camp", "the"]
    n = 3000
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 9))) + f" w{i % 97}" for i in range(n)]
    times = np.array([[T0 + i, 2**62, T0, 2**62] for i in range(n)], dtype=np.int64)
    index = text_index.TenantText()
    index.load([f"m{i:05d}" for i in range(n)], ["n"] * n, texts, times)
    view = TemporalView(as_of=T0 + n)
    queries = [["alpha"], ["alpha", "river", "w3"], ["w5"], ["stone", "camp", "the", "gamma"]]
    answers = {}
    for share in (0.0, 2.0):  # every query dense, then every query sorted
        monkeypatch.setattr(text_rank, "DENSE_HITS", share)
        answers[share] = [
            index.search(q, k, ns, view) for q in queries for k in (5, 200) for ns in (None, "n")
        ]
    assert answers[0.0] == answers[2.0]
    rows = np.array([5, 1, 5, 9, 1, 5])
    parts = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.7])
    monkeypatch.setattr(text_rank, "DENSE_HITS", 0.0)
    dense = text_rank.sum_per_row(rows, parts, 12)
    monkeypatch.setattr(text_rank, "DENSE_HITS", 2.0)
    sorted_ = text_rank.sum_per_row(rows, parts, 12)
    assert dense[0].tolist() == sorted_[0].tolist() == [1, 5, 9]
    assert dense[1].tolist() == sorted_[1].tolist() == [0.2 + 0.5, 0.1 + 0.3 + 0.7, 0.4]


def test_a_view_that_sees_every_row_ranks_as_the_masked_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One namespace, every row open: ``_ranked`` skips the mask (and its length sum);
    the hits, scores and order must be those of the masked path, to the last bit."""
    from attestor_arango.store.embedded.text_index import TenantText

    rng = random.Random(9)
    vocab = [f"w{i}" for i in range(60)]
    index = TenantText()
    for i in range(3000):
        text = " ".join(rng.choice(vocab[: rng.randint(3, 60)]) for _ in range(rng.randint(1, 12)))
        index.add(f"m{i:05d}", "a", text, (i, OPEN, 0, OPEN))
    view = TemporalView(as_of=10**6)
    assert index.rows.all_visible("a", view)
    queries = [query_terms(" ".join(rng.sample(vocab, rng.randint(1, 6)))) for _ in range(30)]
    fast = [index.search(q, 25, "a", view) for q in queries]
    monkeypatch.setattr(RowTable, "all_visible", lambda self, namespace, view: False)
    masked = [index.search(q, 25, "a", view) for q in queries]
    assert fast == masked
    assert all(hits for hits, _ in fast)
