"""The row table: the all-visible shortcut must agree with the mask, and ids find their rows."""

from __future__ import annotations

import random

import numpy as np
import pytest

from attestor_arango.clock import OPEN
from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import rowtable
from attestor_arango.store.embedded.rowtable import RowTable


def _agrees(table: RowTable, namespace: str | None, view: TemporalView) -> bool:
    mask = table.visible_mask(namespace, view)
    every = mask is not None and table.n > 0 and bool(mask.all())
    return table.all_visible(namespace, view) == every


def test_all_visible_agrees_with_the_mask_as_rows_come_and_close() -> None:
    rng = np.random.default_rng(5)
    table = RowTable(4)
    seen_true = seen_false = 0
    for i in range(400):
        ns = "a" if i < 200 else str(rng.choice(["a", "b"]))
        start = int(rng.integers(0, 1000))
        table.append(f"m{i}", ns, (10 + i, OPEN, start, start + int(rng.integers(1, 500))))
        if rng.random() < 0.05:
            table.set_expired(f"m{int(rng.integers(0, i + 1))}", 10 + i + 1)
        for as_of in (5, 10 + i, 10**6):
            for namespace in (None, "a", "b", "zzz"):
                for window in (None, (0, 2000), (400, 600)):
                    for closed in (False, True):
                        view = TemporalView(as_of=as_of, window=window, include_closed=closed)
                        assert _agrees(table, namespace, view)
                        if table.all_visible(namespace, view):
                            seen_true += 1
                        else:
                            seen_false += 1
    assert seen_true and seen_false  # both answers were exercised


def test_a_closed_row_ends_all_visible_and_a_persisted_table_keeps_the_bounds() -> None:
    table = RowTable()
    for i in range(50):
        table.append(f"m{i}", "a", (i, OPEN, 0, OPEN))
    now = TemporalView(as_of=100)
    assert table.all_visible("a", now) and table.all_visible(None, now)
    assert not table.all_visible("b", now)
    assert not table.all_visible("a", TemporalView(as_of=20))  # later rows not yet written
    reopened = RowTable.from_sections(
        {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", ["a"]
    )
    assert reopened.all_visible("a", now)
    table.set_expired("m7", 60)
    reopened.set_expired("m7", 60)
    for t in (table, reopened):
        assert not t.all_visible("a", now)
        assert t.all_visible("a", TemporalView(as_of=100, include_closed=True))
        assert _agrees(t, "a", TemporalView(as_of=55))


def test_a_persisted_id_found_once_is_not_searched_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A recall asks for the rows of the ids a search just handed out, several times:
    those (and ids found once) come from memory, not another binary search of the
    persisted ids, and every answer stays the table's (fails before: every ask searched)."""
    table = RowTable()
    for i in range(300):
        table.append(f"m{i:03d}", "a", (i, OPEN, 0, OPEN))
    persisted = RowTable.from_sections(
        {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", ["a"]
    )
    persisted.append("late", "a", (400, OPEN, 0, OPEN))
    searched: list[str] = []
    base = persisted._base
    assert base is not None
    real = base.rows_of

    def counted(ids: list[str]) -> list[int]:
        searched.extend(ids)
        return real(ids)

    monkeypatch.setattr(base, "rows_of", counted)
    handed = persisted.take_ids(np.arange(10, 20))
    assert handed == [f"m{i:03d}" for i in range(10, 20)]
    asked = [*handed, "m250", "late", "nope"]
    want = [(f"m{i:03d}", i) for i in range(10, 20)] + [("m250", 250), ("late", 300)]
    assert persisted.rows_of(asked) == want
    assert searched == ["m250", "nope"]  # the handed-out ids were not searched for
    assert persisted.rows_of(asked) == want
    assert searched == ["m250", "nope", "nope"]  # an id not held is asked again
    monkeypatch.setattr(rowtable, "_SEEN", 4)  # past the bound: forgotten, still right
    assert persisted.rows_of([f"m{i:03d}" for i in range(30)]) == [
        (f"m{i:03d}", i) for i in range(30)
    ]
    assert persisted.rows_of(asked) == want


def test_a_persisted_row_handed_out_once_is_not_decoded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A recall hands out the ids of the same rows several times (the pool, its decoded
    rows, rows tied on score), and a small store's rows recur from one recall to the next:
    a row's id is decoded from the persisted bytes once while remembered, in any mix with
    new rows and rows appended since, and every answer stays the table's (fails before:
    every take decoded every row)."""
    table = RowTable()
    for i in range(300):
        table.append(f"m{i:03d}", "a", (i, OPEN, 0, OPEN))
    persisted = RowTable.from_sections(
        {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", ["a"]
    )
    persisted.append("late", "a", (400, OPEN, 0, OPEN))
    decoded: list[int] = []
    base = persisted._base
    assert base is not None
    real = base.take

    def counted(rows: np.ndarray) -> list[str]:
        decoded.extend(rows.tolist())
        return real(rows)

    monkeypatch.setattr(base, "take", counted)
    assert persisted.take_ids(np.array([12, 10, 11])) == ["m012", "m010", "m011"]
    assert persisted.take_ids(np.array([11, 13, 10, 12])) == ["m011", "m013", "m010", "m012"]
    assert decoded == [12, 10, 11, 13]
    assert persisted.take_ids(np.array([299, 300, 10])) == ["m299", "late", "m010"]
    assert persisted.rows_of(["m013", "m299"]) == [("m013", 13), ("m299", 299)]
    monkeypatch.setattr(rowtable, "_SEEN", 2)  # past the bound: forgotten, still right
    assert persisted.take_ids(np.array([5, 6, 7])) == ["m005", "m006", "m007"]
    assert persisted.take_ids(np.array([5, 13])) == ["m005", "m013"]


@pytest.mark.parametrize("seed", range(6))
def test_ids_and_rows_found_lately_or_searched_agree_with_the_table_they_came_from(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A persisted table answers ``rows_of`` and ``take_ids`` from the ids and rows it handed
    out lately when every one asked was (one dict read each), else by the search and the
    decode: in any mix of remembered, new, unknown and repeated ids, before and after a row
    is appended and after the memory of them is dropped, every answer is the one the table
    it was written from gives."""
    rng = random.Random(seed)
    table = RowTable()
    for i in range(200):
        table.append(f"m{i:03d}", "a", (i, OPEN, 0, OPEN))
    persisted = RowTable.from_sections(
        {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", ["a"]
    )
    monkeypatch.setattr(rowtable, "_SEEN", 120)  # forgotten now and then
    for step in range(60):
        if step == 40:  # a row appended: the table no longer only persisted rows
            table.append("late", "a", (400, OPEN, 0, OPEN))
            persisted.append("late", "a", (400, OPEN, 0, OPEN))
        rows = rng.sample(range(table.n), rng.choice([1, 5, 30]))
        rows += rng.choices(rows, k=rng.choice([0, 2]))  # a row asked twice
        assert persisted.take_ids(np.array(rows)) == table.take_ids(np.array(rows))
        ids = [f"m{r:03d}" for r in rng.sample(range(200), rng.choice([1, 5, 30]))]
        ids += rng.sample(["nope", "m999", "late", ids[0]], rng.choice([0, 1, 2]))
        assert persisted.rows_of(ids) == table.rows_of(ids)
        assert persisted.rows_of(ids) == table.rows_of(ids)  # again: now all remembered


def test_the_ids_a_persisted_table_holds_by_row_stay_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``take_ids`` finds the ids it handed out lately by row (one gather); past ``_SEEN``
    ids they are all forgotten, found by row or by id alike, and decoded again when next
    asked (fails if the rows' ids outlive the bound, or are not held by row)."""
    table = RowTable()
    for i in range(300):
        table.append(f"m{i:03d}", "a", (i, OPEN, 0, OPEN))
    persisted = RowTable.from_sections(
        {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", ["a"]
    )
    base = persisted._base
    assert base is not None
    real = base.take
    decoded: list[int] = []

    def counted(rows: np.ndarray) -> list[str]:
        decoded.extend(rows.tolist())
        return real(rows)

    monkeypatch.setattr(base, "take", counted)
    monkeypatch.setattr(rowtable, "_SEEN", 50)
    rng = random.Random(3)
    for _ in range(40):
        rows = rng.sample(range(300), 30)
        decoded.clear()
        assert persisted.take_ids(np.array(rows)) == [f"m{r:03d}" for r in rows]
        held = [r for r, i in enumerate(persisted._named.tolist()) if i is not None]
        assert len(held) <= 50 and sorted(held) == sorted(persisted._seen.values())
        assert persisted.take_ids(np.array(rows)) == [f"m{r:03d}" for r in rows]
        assert len(decoded) <= 30  # the second take decoded nothing
    persisted.rows_of(["m001", "m002"])  # found by id: held by row as well
    decoded.clear()
    assert persisted.take_ids(np.array([2, 1])) == ["m002", "m001"] and decoded == []


@pytest.mark.parametrize("seed", range(6))
def test_held_is_the_pairs_rows_of_and_in_namespace_give(seed: int) -> None:
    """``held`` (two columns, by one dict read per id when it can) against the pairs it
    replaces, on tables of one namespace and of two, persisted or not, with ids found
    lately or not, appended since, unknown and repeated (fails if the one-read way ignored
    the namespace, or answered for an id the table does not hold)."""
    rng = random.Random(seed)
    for spaces in (["a"], ["a", "b"]):
        table = RowTable()
        for i in range(120):
            table.append(f"m{i:03d}", rng.choice(spaces), (i, OPEN, 0, OPEN))
        persisted = RowTable.from_sections(
            {f"r.{k}": v for k, v in table.sections()[0].items()}, "r.", table._ns_names
        )
        for step in range(30):
            if step == 20:
                for t in (table, persisted):
                    t.append("late", spaces[-1], (400, OPEN, 0, OPEN))
            ids = [f"m{r:03d}" for r in rng.sample(range(120), rng.choice([1, 5, 40]))]
            ids += rng.sample(["nope", "late", ids[0]], rng.choice([0, 0, 1, 2]))
            for t in (table, persisted):
                for namespace in (None, "a", "b", "z"):
                    found = t.in_namespace(t.rows_of(ids), namespace)
                    want = ([i for i, _ in found], [r for _, r in found])
                    assert t.held(ids, namespace) == want
