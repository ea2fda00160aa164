"""The embedded text lane's two-step search returns exactly what one full join returns."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from retrieval_fakes import stored_memory

from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import fts as embedded_fts
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.fts import fts_match
from attestor_arango.store.embedded.store import SQLiteStore

T0 = 1_767_225_600_000_000
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta"]


@pytest.mark.parametrize("min_factor", [1, 2, 50])
def test_two_step_lane_equals_full_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, min_factor: int
) -> None:
    monkeypatch.setattr(embedded_fts, "_TEXT_MIN_FACTOR", min_factor)
    monkeypatch.setattr(embedded_fts, "_TEXT_LAST_CUT", 200)
    store = SQLiteStore(tmp_path / "m.db", text_index="fts5")
    rng = random.Random(5)
    scopes = [Scope("big", "n"), Scope("small", "n"), Scope("small", "other")]
    for i in range(400):
        scope = scopes[0] if i % 10 else scopes[1 + (i // 10) % 2]
        # few distinct texts, so many rows tie on their BM25 score; ids run against rowid
        # order, so a cut that drops tied rows shows up in the id tie-break
        text = " ".join(rng.choices(WORDS[: 3 + i % 5], k=3))
        store.insert_memory(scope, stored_memory(scope, i, text, T0 + i), None)
    store.close_memory(scopes[0], "m9998", T0 + 500, "archived", None)
    views = [
        TemporalView(as_of=T0 + 1000),
        TemporalView(as_of=T0 + 150),
        TemporalView(as_of=T0 + 1000, include_closed=True),
    ]
    for scope in [*scopes, Scope("small"), Scope("nobody")]:
        for view in views:
            for query in ("alpha", "gamma omega", "theta kappa sigma", "beta"):
                for k in (1, 3, 10, 50):
                    got = store.text_pool(scope, query, k, view)
                    params = {
                        "tenant": scope.tenant,
                        "namespace": scope.namespace,
                        "as_of": view.as_of,
                        "expired_after": view.t_expired_after,
                        "w_start": view.window_start,
                        "w_end": view.window_end,
                        "match": fts_match(query),
                        "k": k,
                    }
                    want = store.db.conn.execute(q.TEXT_CANDIDATES, params).fetchall()
                    assert [(h.id, h.score) for h in got] == [
                        (r["id"], pytest.approx(r["score"], rel=1e-12)) for r in want
                    ], (scope, view, query, k)
    store.close()


def test_first_cut_follows_the_scopes_share_of_the_index(tmp_path: Path) -> None:
    """A tenant with a small share of a big file needs one ranked query once it is known."""
    store = SQLiteStore(tmp_path / "m.db", text_index="fts5")
    big, small = Scope("big", "n"), Scope("small", "n")
    for i in range(600):
        scope = small if i % 20 == 0 else big  # small holds 1 row in 20
        store.insert_memory(
            scope, stored_memory(scope, i, f"alpha beta {WORDS[i % 8]}", T0 + i), None
        )
    ranked_queries: list[int] = []
    execute = store.db.execute

    def counting(sql: str, params: dict[str, object]) -> object:
        if sql == q.TEXT_TOP_RANKED:
            ranked_queries.append(int(params["n"]))  # type: ignore[call-overload]
        return execute(sql, params)

    store.db.execute = counting  # type: ignore[method-assign]
    view = TemporalView(as_of=T0 + 10_000)
    first = store.text_pool(small, "alpha", 10, view)
    widened = len(ranked_queries)
    ranked_queries.clear()
    second = store.text_pool(small, "alpha", 10, view)
    assert first == second and len(first) == 10
    assert widened > 1  # the first read did not know the share and widened
    assert len(ranked_queries) == 1 and ranked_queries[0] > 2 * 10  # started wider
    store.close()
