"""The embedded vector index: int8 scan with error bounds, then exact re-scoring.

Every answer is compared with a brute-force float64 scan of the stored float32
rows: same ids in the same order (score desc, id asc), same scores.
"""

from __future__ import annotations

import numpy as np
import pytest

from attestor_arango.clock import OPEN
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import quantise
from attestor_arango.store.embedded import vectors as vectors_module
from attestor_arango.store.embedded.vectors import TenantVectors, kth_largest, quantize


def _brute(
    index: TenantVectors, q: np.ndarray, k: int, namespace: str | None, view: TemporalView
) -> list[tuple[str, float]]:
    rows = []
    t = index.rows
    code = None if namespace is None else t.ns_code(namespace)
    for i, memory_id in enumerate(index.rows.take_ids(range(index.n))):
        if not (t.t_created[i] <= view.as_of and t.t_expired[i] > view.t_expired_after):
            continue
        if view.window is not None and not (
            t.valid_from[i] < view.window_end and t.valid_until[i] > view.window_start
        ):
            continue
        if code is not None and t.ns[i] != code:
            continue
        v = index.matrix[i].astype(np.float64)
        rows.append((memory_id, float((v * q.astype(np.float64)).sum())))
    rows.sort(key=lambda p: (-p[1], p[0]))
    return rows[:k]


def _index(vecs: np.ndarray, rng: np.random.Generator) -> TenantVectors:
    index = TenantVectors(vecs.shape[1], capacity=8)  # small: exercises growth
    for i, v in enumerate(vecs):
        t_created = 10 + i
        t_expired = OPEN if rng.random() < 0.8 else t_created + int(rng.integers(1, 500))
        valid_from = int(rng.integers(0, 1000))
        index.add(
            f"m{rng.integers(0, 10**9):09d}-{i:05d}",
            "a" if rng.random() < 0.7 else "b",
            v,
            t_created,
            t_expired,
            valid_from,
            valid_from + int(rng.integers(1, 1000)),
        )
    return index


def _dense(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _sparse(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Like the hashing embedder: a few non-zero buckets, many equal magnitudes."""
    m = np.zeros((n, d), dtype=np.float32)
    for row in m:
        row[rng.integers(0, d, size=int(rng.integers(1, 8)))] += 1.0
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _views(n: int) -> list[tuple[str | None, TemporalView]]:
    late = 10 + n + 1000
    return [
        (None, TemporalView(as_of=late)),
        ("a", TemporalView(as_of=late)),
        ("b", TemporalView(as_of=10 + n // 2)),
        (None, TemporalView(as_of=late, include_closed=True)),
        ("a", TemporalView(as_of=late, window=(200, 400))),
        ("zzz", TemporalView(as_of=late)),
    ]


@pytest.mark.parametrize("make", [_dense, _sparse])
@pytest.mark.parametrize(
    ("int8_rows", "simd"), [(10**9, True), (0, True), (0, False)], ids=["f32", "int8", "int8-numpy"]
)
def test_search_equals_brute_force(
    make: object, int8_rows: int, simd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "_INT8_ROWS", int8_rows)
    monkeypatch.setattr(vectors_module, "USE_SIMSIMD", simd)
    monkeypatch.setattr(quantise, "USE_SIMSIMD", simd)
    rng = np.random.default_rng(11)
    n, d = 5000, 48  # more than two scan chunks
    vecs = make(rng, n, d)  # type: ignore[operator]
    vecs[100:140] = vecs[99]  # exact ties: the id decides
    index = _index(vecs, rng)
    for _ in range(8):
        q = make(rng, 1, d)[0]  # type: ignore[operator]
        for namespace, view in _views(n):
            every = _brute(index, q, n, namespace, view)
            for k in (1, 7, 50, 10_000):
                got = index.search(q, k, namespace, view)
                want = every[:k]
                assert [g[0] for g in got] == [w[0] for w in want]
                assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-12)


def test_ties_with_the_query_row_are_all_kept_and_ordered_by_id() -> None:
    rng = np.random.default_rng(3)
    vecs = _dense(rng, 300, 16)
    vecs[:20] = vecs[0]
    index = _index(vecs, rng)
    view = TemporalView(as_of=10**6, include_closed=True)
    got = index.search(vecs[0], 5, None, view)
    tied = sorted(index.rows.take_ids(range(20)))[:5]
    assert [g[0] for g in got] == tied


def test_quantisation_bound_holds() -> None:
    rng = np.random.default_rng(5)
    for v in np.vstack([_dense(rng, 200, 384), _sparse(rng, 200, 384)]):
        codes, scale, err, _, _ = quantize(v)
        q = rng.standard_normal(384)
        approx = float(scale[0]) * float(codes[0].astype(np.float64) @ q)
        assert abs(float(v.astype(np.float64) @ q) - approx) <= float(err[0]) * float(
            np.linalg.norm(q)
        )
        assert err[0] < 0.05  # tight enough to prune: the scan is worth doing


def test_bulk_load_answers_like_one_by_one_adds() -> None:
    rng = np.random.default_rng(9)
    vecs = _dense(rng, 5000, 24)
    one_by_one = _index(vecs, rng)
    bulk = TenantVectors(24)
    bulk.load(
        one_by_one.rows.take_ids(range(5000)),
        [one_by_one.rows.namespace(i) for i in range(5000)],
        vecs,
        np.stack(
            [
                one_by_one.rows.t_created,
                one_by_one.rows.t_expired,
                one_by_one.rows.valid_from,
                one_by_one.rows.valid_until,
            ],
            axis=1,
        )[:5000],
    )
    for name in ("codes", "scale", "err", "rounding", "size"):
        assert np.array_equal(getattr(bulk, name)[:5000], getattr(one_by_one, name)[:5000])
    for name in ("ns", "t_expired"):
        got = getattr(bulk.rows, name)[:5000]
        assert np.array_equal(got, getattr(one_by_one.rows, name)[:5000])
    for q in _dense(rng, 5, 24):
        for namespace, view in _views(5000):
            assert bulk.search(q, 20, namespace, view) == one_by_one.search(q, 20, namespace, view)
    with pytest.raises(RuntimeError):
        bulk.load(["x"], ["a"], vecs[:1], np.zeros((1, 4), dtype=np.int64))


def test_empty_and_zero_k() -> None:
    index = TenantVectors(4)
    view = TemporalView(as_of=100)
    assert index.search(np.ones(4, dtype=np.float32), 5, None, view) == []
    index.add("x", "a", np.ones(4, dtype=np.float32), 1, OPEN, 0, OPEN)
    assert index.search(np.ones(4, dtype=np.float32), 0, None, view) == []
    assert index.search(np.ones(4, dtype=np.float32), 5, "nope", view) == []
    assert [i for i, _ in index.search(np.ones(4, dtype=np.float32), 5, "a", view)] == ["x"]


def test_simd_and_numpy_int8_dots_are_the_same_exact_integers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert quantise.USE_SIMSIMD and vectors_module.USE_SIMSIMD  # installed, so it is used
    rng = np.random.default_rng(2)
    codes = rng.integers(-127, 128, size=(5000, 1100), dtype=np.int8)  # sums past 2**24
    q = rng.integers(-127, 128, size=1100, dtype=np.int8)
    want = codes.astype(np.int64) @ q.astype(np.int64)
    simd = quantise.int8_dots([codes], q)
    small = (codes[:, :384].astype(np.int64) @ q[:384].astype(np.int64)).astype(np.float64)
    assert np.array_equal(quantise.int8_dots32([codes[:, :384]], q[:384]), small)
    monkeypatch.setattr(quantise, "USE_SIMSIMD", False)
    assert np.array_equal(simd, want.astype(np.float64))
    assert np.array_equal(quantise.int8_dots([codes[:2000], codes[2000:]], q), simd)
    assert np.array_equal(quantise.int8_dots([codes[:, :384]], q[:384]), small)


@pytest.mark.parametrize("simd", [True, False])
def test_scan_bounds_cover_both_quantisation_errors(
    simd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows exact in int8 and a query that is not: only the query's error is left."""
    monkeypatch.setattr(vectors_module, "_INT8_ROWS", 0)
    monkeypatch.setattr(vectors_module, "USE_SIMSIMD", simd)
    monkeypatch.setattr(quantise, "USE_SIMSIMD", simd)
    rng = np.random.default_rng(4)
    dim = 8
    rows = np.vstack([np.eye(dim, dtype=np.float32), _dense(rng, 200, dim)])
    index = TenantVectors(dim)
    for i, v in enumerate(rows):
        index.add(f"m{i:04d}", "a", v, 1, OPEN, 0, OPEN)
    queries = [np.array([1.0, 0.0049, -0.0031, 0, 0, 0, 0, 0.0045], dtype=np.float32)]
    queries += list(_dense(rng, 20, dim))
    for q in queries:
        approx, slack = index._scan(q)
        exact = rows.astype(np.float64) @ q.astype(np.float64)
        assert np.all(np.abs(exact - approx) <= slack)
        # the unit rows carry no error of their own: their slack is the query's
        assert np.all(index.err[:dim] < 1e-3)


@pytest.mark.parametrize("int8_rows", [10**9, 0])
def test_a_query_tied_with_every_row_returns_the_first_ids(
    int8_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "_INT8_ROWS", int8_rows)
    rng = np.random.default_rng(8)
    index = _index(_dense(rng, 5000, 16), rng)  # more rows than one exact-scoring chunk
    view = TemporalView(as_of=10**9, include_closed=True)
    got = index.search(np.zeros(16, dtype=np.float32), 5, None, view)
    assert got == [(i, 0.0) for i in sorted(index.rows.take_ids(range(index.n)))[:5]]


@pytest.mark.parametrize("n", [1, 7, 600, 5_000, 40_000])
def test_kth_largest_is_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    arrays = [
        rng.normal(size=n),
        rng.integers(0, 3, size=n).astype(np.float64),  # heavy ties
        np.zeros(n),
    ]
    # the sampled rows hold the largest values: the threshold leaves too few, so the
    # whole array is partitioned
    skewed = rng.normal(size=n)
    skewed[:: vectors_module.SAMPLE_STEP] += 100.0
    arrays.append(skewed)
    for values in arrays:
        ordered = np.sort(values)[::-1]
        for k in {1, min(n, 50), min(n, 257), n}:
            assert kth_largest(values, k) == ordered[k - 1], (n, k)


def test_growing_keeps_the_rows_and_leaves_the_new_room_zero() -> None:
    """Growth copies the rows once and leaves zeros beyond them: ``np.resize`` filled the
    new room with repeated copies of the old rows, writing the whole new capacity (at a
    million rows, ~1 GB made resident by the one add that grew the index)."""
    rng = np.random.default_rng(4)
    vecs = _dense(rng, 40, 8)
    index = TenantVectors(8, capacity=16)
    for i, v in enumerate(vecs):
        index.add(f"m{i:03d}", "a", v, 10 + i, 2**62, 10 + i, 2**62)
    assert index.rows.capacity > 40
    assert np.array_equal(index.matrix[:40], vecs)
    for name in ("matrix", "codes", "scale", "err", "rounding", "size"):
        assert not getattr(index, name)[40:].any(), name
    for name in ("ns", "t_created", "t_expired", "valid_from", "valid_until"):
        assert not getattr(index.rows, name)[40:].any(), name


def _full_scan_chosen(index: TenantVectors, q: np.ndarray, take: int) -> np.ndarray:
    """The rows the scan over every row's bounds re-scores (search before the pruning)."""
    approx, slack = index._scan(q)
    floor = kth_largest(approx - slack, take)
    return np.flatnonzero(approx + slack >= floor)


@pytest.mark.parametrize("norms", ["unit", "varied"])
def test_pruned_scan_keeps_every_row_the_full_scan_keeps(norms: str) -> None:
    """Above the int8 threshold, with every row visible: the bounds are taken only for the
    rows that can reach the floor. Their set must hold every row the full scan re-scores,
    and the answers must equal a brute-force scan (ties included)."""
    rng = np.random.default_rng(21)
    n, d = 12_000, 32
    vecs = _dense(rng, n, d)
    if norms == "varied":  # one row's wide slack must not let another row slip through
        vecs *= rng.uniform(0.01, 3.0, size=(n, 1)).astype(np.float32)
    vecs[500:520] = vecs[499]  # exact ties: the id decides
    ids = [f"m{i:05d}" for i in range(n)]
    times = np.tile(np.array([1, OPEN, 0, OPEN], dtype=np.int64), (n, 1))
    index = TenantVectors(d)
    index.load(ids, ["a"] * n, vecs, times)
    view = TemporalView(as_of=10**9)
    assert index.rows.all_visible("a", view)
    queries = [vecs[499], np.zeros(d, dtype=np.float32), *_dense(rng, 12, d)]
    pruned = 0
    for q in queries:
        scores = vecs.astype(np.float64) @ q.astype(np.float64)
        want = sorted(zip(ids, scores.tolist(), strict=True), key=lambda p: (-p[1], p[0]))
        for k in (1, 10, 50, 500):
            chosen = index._chosen(q, None, k)
            if chosen is not None:
                pruned += 1
                assert chosen.size < n // 10
                assert set(_full_scan_chosen(index, q, k).tolist()) <= set(chosen.tolist())
            got = index.search(q, k, "a", view)
            assert [g[0] for g in got] == [w[0] for w in want[:k]]
            assert [g[1] for g in got] == pytest.approx([w[1] for w in want[:k]], abs=1e-12)
    assert pruned >= 2 * (len(queries) - 1)  # the shortcut ran (not for the zero query)


def test_pruned_scan_over_a_subset_of_rows_equals_brute_force() -> None:
    """Some rows closed or in another namespace: the shortcut works on the visible rows."""
    rng = np.random.default_rng(22)
    n, d = 12_000, 24
    vecs = _dense(rng, n, d)
    index = _index(vecs, rng)
    assert index.n >= vectors_module._INT8_ROWS
    for namespace, view in _views(n)[:3]:
        assert not index.rows.all_visible(namespace, view)
        for q in _dense(rng, 3, d):
            got = index.search(q, 20, namespace, view)
            want = _brute(index, q, 20, namespace, view)
            assert [g[0] for g in got] == [w[0] for w in want]
            assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-12)


def test_the_prefilter_answers_the_exact_top_k_of_the_rows_nearest_by_code_signs() -> None:
    """Opt-in and approximate: the answer is the exact top-k of the ``keep`` visible rows
    nearest the query in Hamming distance of the code signs (ties with the keep-th
    included), checked against that subset computed here from the codes; keeping at
    least every visible row answers as the exact search."""
    rng = np.random.default_rng(23)
    n, d, keep = 12_000, 40, 700
    vecs = _dense(rng, n, d)
    index = _index(vecs, rng)
    signs = index.codes[:n] > 0
    for namespace, view in _views(n)[:4]:
        mask = index.rows.visible_mask(namespace, view)
        assert mask is not None
        for q in _dense(rng, 3, d):
            q_signs = quantize(q)[0][0] > 0
            far = (signs != q_signs).sum(axis=1)
            visible = np.flatnonzero(mask)
            reach = np.sort(far[visible])[keep - 1]
            subset = set(visible[far[visible] <= reach].tolist())
            every = _brute(index, q, n, namespace, view)
            row = {memory_id: i for i, memory_id in enumerate(index.rows.take_ids(range(n)))}
            want = [p for p in every if row[p[0]] in subset][:10]
            got = index.search(q, 10, namespace, view, prefilter=keep)
            assert [g[0] for g in got] == [w[0] for w in want]
            assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-12)
            assert index.search(q, 10, namespace, view, prefilter=n) == index.search(
                q, 10, namespace, view
            )


def test_the_prefilter_applies_from_its_row_threshold_of_visible_rows() -> None:
    """``prefilter_rows``: below that many visible rows the answer is the exact one, from
    it the prefiltered one; rows the view does not see do not count (a replay at the same
    as_of decides alike however many rows arrived since)."""
    rng = np.random.default_rng(24)
    n, d, keep = 12_000, 40, 300
    vecs = _dense(rng, n, d)
    index = _index(vecs, rng)
    differs = 0
    for namespace, view in _views(n)[:4]:
        mask = index.rows.visible_mask(namespace, view)
        visible = n if mask is None else int(mask.sum())
        for q in _dense(rng, 3, d):
            exact = index.search(q, 10, namespace, view)
            approx = index.search(q, 10, namespace, view, prefilter=keep)
            differs += approx != exact
            below = index.search(q, 10, namespace, view, keep, prefilter_rows=visible + 1)
            assert below == exact
            at = index.search(q, 10, namespace, view, keep, prefilter_rows=visible)
            assert at == approx
    assert differs  # the stage changes some answers, so the threshold is seen to act


def test_the_pruned_scan_reads_the_codes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the int8 threshold the bounds of the rows the shortcut keeps come from the
    scan's own exact integer dots (gathered), not from a second pass over their codes;
    the answers still equal a brute-force scan (fails before: two more int8 passes)."""
    rng = np.random.default_rng(23)
    n, d = 12_000, 32
    vecs = _dense(rng, n, d)
    ids = [f"m{i:05d}" for i in range(n)]
    index = TenantVectors(d)
    index.load(ids, ["a"] * n, vecs, np.tile(np.array([1, OPEN, 0, OPEN]), (n, 1)))
    passes: list[int] = []
    real = vectors_module.int8_dots

    def counted(blocks: list[np.ndarray], query_codes: np.ndarray) -> np.ndarray:
        passes.append(sum(len(b) for b in blocks))
        return real(blocks, query_codes)

    monkeypatch.setattr(vectors_module, "int8_dots", counted)
    view = TemporalView(as_of=10**9)
    pruned = 0
    for q in _dense(rng, 6, d):
        pruned += index._chosen(q, None, 50) is not None  # the shortcut applies
        got = index.search(q, 50, "a", view)
        want = _brute(index, q, 50, "a", view)
        assert [g[0] for g in got] == [w[0] for w in want]
        assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-12)
    assert pruned >= 4
    assert passes == []


def test_sign_bits_follow_both_code_blocks_as_rows_arrive() -> None:
    """The prefilter's packed signs of a persisted block and the rows added since, built
    from slices and extended as rows come, equal those packed from all codes at once."""
    from attestor_arango.store.embedded.prefilter import SignBits, sign_words

    rng = np.random.default_rng(25)
    base = rng.integers(-127, 128, size=(70_000, 20), dtype=np.int8)  # more than one step
    tail = rng.integers(-127, 128, size=(3000, 20), dtype=np.int8)
    signs = SignBits()
    for used in (1000, 1000, 3000):  # rows added since the file, then more of them
        got = signs.of([base, tail[:used]], 80_000, 20).copy()
        want = sign_words(np.concatenate([base, tail[:used]])).T
        assert np.array_equal(got, want)
    fresh = SignBits().of([tail[:10]], 16, 20)  # an index with no persisted rows
    assert np.array_equal(fresh, sign_words(tail[:10]).T)


@pytest.mark.parametrize("n", [60, 12_000])
def test_top_as_a_set_is_the_search_answer_unscored_or_ranked(n: int) -> None:
    """``exact.top`` over ``candidates``: ordered, the search's answer as columns; not
    ordered, the same rows with no score computed (None) when the bounds chose just them,
    else ranked as ordered (rows tied at the cut are chosen beyond the k: duplicates)."""
    from attestor_arango.store.embedded.exact import top

    rng = np.random.default_rng(n)
    vecs = _dense(rng, n, 24)
    vecs[1::7] = vecs[::7][: len(vecs[1::7])]  # a row twice: ties at the cut
    index = _index(vecs, rng)
    view = TemporalView(as_of=10**6)
    sets = ranked = 0
    for j in range(40):
        q = vecs[rng.integers(0, n)] if j % 2 else _dense(rng, 1, 24)[0]
        for k, namespace in ((1, None), (5, "a"), (20, None), (n + 5, "b")):
            want = index.search(q, k, namespace, view)
            chosen, q32, take = index.candidates(q, k, namespace, view)
            got = top(index.rows.take_ids, index.float_rows, chosen, q32, take)
            assert got == ([i for i, _ in want], [s for _, s in want])
            ids, scores = top(index.rows.take_ids, index.float_rows, chosen, q32, take, False)
            assert sorted(ids) == sorted(i for i, _ in want)
            if scores is None:
                sets += 1
                assert chosen.size == take
            else:
                ranked += 1
                assert (ids, scores) == got[:2] and chosen.size > take
    assert sets and ranked
