"""The int8 scan in parts (store/embedded/scan.py): the caller and helper threads share the
rows of a large index; the numbers are those of one SimSIMD call whatever the split."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from attestor_arango.clock import OPEN
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import quantise, scan
from attestor_arango.store.embedded.vectors import TenantVectors

pytestmark = pytest.mark.skipif(not quantise.USE_SIMSIMD, reason="scans in parts with SimSIMD")


def _codes(rng: np.random.Generator, n: int, dim: int = 384) -> np.ndarray:
    return rng.integers(-127, 128, size=(n, dim), dtype=np.int8)


def _one_call(codes: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (codes.astype(np.int64) @ q.astype(np.int64)).astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parts_give_the_dots_of_one_scan(dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of odd sizes (and an empty one) cut into parts: every row's dot, in order."""
    monkeypatch.setattr(scan, "PART_ROWS", 1000)
    rng = np.random.default_rng(1)
    blocks = [_codes(rng, 4321), _codes(rng, 0), _codes(rng, 999), _codes(rng, 2500)]
    q = _codes(rng, 1)[0]
    want = _one_call(np.concatenate(blocks), q)
    kernel = quantise.simd_dots32 if dtype == np.float32 else quantise.simd_dots64
    for parallel_rows in (0, 10**9):  # in parts, and one call per block
        got = scan.dots(blocks, q, kernel, dtype, parallel_rows)
        assert got.dtype == dtype
        assert np.array_equal(got.astype(np.float64), want)
    assert scan.dots([], q, kernel, dtype, 0).size == 0
    assert scan.dots([blocks[1]], q, kernel, dtype, 10**9).size == 0
    one = scan.dots([blocks[0]], q, kernel, dtype, 10**9)  # one part: the kernel's array
    assert one.dtype == dtype and np.array_equal(one.astype(np.float64), want[:4321])


def test_scans_from_many_threads_at_once_do_not_mix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers recall from several threads: each scan gets its own rows' dots."""
    monkeypatch.setattr(scan, "PART_ROWS", 500)
    rng = np.random.default_rng(2)
    codes = [_codes(rng, 3000 + 97 * i) for i in range(6)]
    queries = [_codes(rng, 1)[0] for _ in range(6)]
    wrong: list[int] = []

    def recall(i: int) -> None:
        for _ in range(20):
            got = scan.dots([codes[i]], queries[i], quantise.simd_dots32, np.float32, 0)
            if not np.array_equal(got.astype(np.float64), _one_call(codes[i], queries[i])):
                wrong.append(i)

    threads = [threading.Thread(target=recall, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


@pytest.mark.parametrize("fail", [False, True])
def test_the_caller_waits_for_a_helpers_part_and_gets_its_errors(
    fail: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part a helper holds is waited for (its dots are in the answer), and an error in it
    is raised in the caller, not lost in the helper thread."""
    if scan._pool() is None:
        pytest.skip("needs a second core")
    monkeypatch.setattr(scan, "PART_ROWS", 100)
    rng = np.random.default_rng(3)
    codes = _codes(rng, 1000)
    q = _codes(rng, 1)[0]
    claimed = threading.Event()
    held: list[int] = []

    def kernel(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        if threading.current_thread().name.startswith("attestor-vector-scan"):
            if not held:
                held.append(1)
                claimed.set()
                if fail:
                    raise RuntimeError("helper's part failed")
        else:
            claimed.wait(30)  # the caller's first part lasts until a helper holds one
        return quantise.simd_dots32(rows, query)

    if fail:
        with pytest.raises(RuntimeError, match="helper's part failed"):
            scan.dots([codes], q, kernel, np.float32, 0)
    else:
        got = scan.dots([codes], q, kernel, np.float32, 0)
        assert np.array_equal(got.astype(np.float64), _one_call(codes, q))
    assert held  # a helper took part


def test_an_error_in_the_callers_part_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "PART_ROWS", 100)
    rng = np.random.default_rng(4)

    def kernel(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        raise ValueError("broken kernel")

    with pytest.raises(ValueError, match="broken kernel"):
        scan.dots([_codes(rng, 1000)], _codes(rng, 1)[0], kernel, np.float32, 0)


def test_a_large_index_answers_the_same_scanned_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vector index's answers with its scan in parts equal those of one scan."""
    rng = np.random.default_rng(5)
    n, d = 12_000, 48
    vecs = rng.standard_normal((n, d)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs[100:140] = vecs[99]  # exact ties
    index = TenantVectors(d)
    ids = [f"m{i:05d}" for i in range(n)]
    index.load(ids, ["a"] * n, vecs, np.tile(np.array([1, OPEN, 0, OPEN]), (n, 1)))
    view = TemporalView(as_of=10**9)
    queries = rng.standard_normal((6, d)).astype(np.float32)
    queries[0] = vecs[99]
    whole = [index.search(q, 50, "a", view) for q in queries]
    monkeypatch.setattr(scan, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(scan, "PART_ROWS", 700)
    assert [index.search(q, 50, "a", view) for q in queries] == whole


def test_scans_leave_the_reference_count_of_none_alone() -> None:
    """SimSIMD 6.5's ``cdist(..., out=...)`` drops a reference to None per call; on Python
    3.11 enough recalls then end the process (fails if the scan writes through ``out=``)."""
    rng = np.random.default_rng(6)
    codes, q = _codes(rng, 3000), _codes(rng, 1)[0]
    before = sys.getrefcount(None)
    for _ in range(50):
        scan.dots([codes], q, quantise.simd_dots32, np.float32, 0)
        scan.dots([codes], q, quantise.simd_dots64, np.float64, 1 << 62)
    assert sys.getrefcount(None) >= before - 10  # other threads may hold a few at any time
