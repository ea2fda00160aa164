"""Session 23 attack battery: two processes writing the same tenant at once, each reading it
(so each loads, drops and reloads its indexes as the other commits, rewriting the index
files every few rows caught up) and each saving its files as it closes, the closes racing.

No row may be lost, and no index file may be served for another set of rows: once both
closed, a fresh process finds every written row by its own word (exactly that row), and
answers every query exactly as a copy of the SQLite file alone (every index rebuilt from
the rows); so does the process after it, which maps the files the first one left.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.support.processes import Worker

QUERIES = ["rows together 3", "together 5 aw7", "bw11 together", "rows"]
N = 120


def _answers(w: Worker) -> list[object]:
    return [[w.call("pool", "t", q), w.call("nearest", "t", q)] for q in QUERIES]


def _rebuilt(path: Path, folder: Path) -> list[object]:
    folder.mkdir()
    src, dst = sqlite3.connect(path), sqlite3.connect(folder / "mem.db")
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    w = Worker(folder / "mem.db")
    try:
        return _answers(w)
    finally:
        w.close()


def test_two_writers_of_one_tenant_lose_no_row_and_leave_files_of_their_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mem.db"
    seed = Worker(path)
    seed.call("adds", "t", ["the first row of the tenant"])
    seed.call("recall", "t", "first row")  # its files exist from the start
    seed.close()
    a, b = Worker(path), Worker(path)
    for w in (a, b):  # each reload that caught up 3 rows rewrites the files: saves race
        w.call("resave_rows", 3)
    a.send("churn", "t", "a", N, 7)
    b.send("churn", "t", "b", N, 5)
    ids = a.read()["ok"] + b.read()["ok"]
    assert len(set(ids)) == 2 * N
    a.send("close")
    b.send("close")  # both save their indexes at once
    assert a.read() == {"ok": None} and b.read() == {"ok": None}
    words = [f"{p}w{i}" for p in "ab" for i in range(N)]
    truth = _rebuilt(path, tmp_path / "truth")
    for _ in range(2):  # the first reopening may rebuild and save; the second maps those
        fresh = Worker(path)
        found = fresh.call("find_each", "t", words)
        assert {w: len(c) for w, c in found.items()} == {w: 1 for w in words}
        assert all(c[0].startswith(f"{w} ") for w, c in found.items())
        assert _answers(fresh) == truth
        fresh.close()
