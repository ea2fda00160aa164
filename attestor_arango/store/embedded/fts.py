"""The embedded store's text lane: the in-memory index (default) or FTS5.

``text_index="memory"`` (the default) answers from ``TenantText``
(text_index.py): BM25 over exactly the rows the view sees. ``"fts5"`` asks
SQLite's FTS5 index instead, with no memory cost, but FTS5 ranks with
statistics of every row it holds, so above the pool size (200 rows) which rows
it picks depends on other tenants' rows and on rows written after a replay's
``as_of`` (docs/design-notes.md).

FTS5 queries OR the words (recall wants any overlap; BM25 ranks) and quote them,
so nothing a user types is read as an FTS5 operator. Very common words are
dropped on the query side only: OR-matching them scans most of the index for no
ranking signal. A component of ``SQLiteStore``, handed the connection and the
caches (for the tenant's in-memory text index).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.embedded import sql as q
from attestor_arango.store.embedded.base import SQLiteAccess, scope_params, view_params
from attestor_arango.store.embedded.caches import TenantCaches
from attestor_arango.store.embedded.text_index import query_terms, query_words
from attestor_arango.store.protocol import PoolScores, TextHit, check_tenant
from attestor_arango.text import stemming

TEXT_INDEXES = ("memory", "fts5")
# The FTS5 lane first scores only the index's best rows (cheap), widening the cut while the
# scope's own rows are too few among them; past the last cut it filters every match.
# The first cut is sized from the share of the index's best rows the scope saw last time
# (a single-tenant store sees nearly all, a small tenant of a big file few), so most reads
# need one ranked query; the answer never depends on it, only the cost does. The factor
# leaves room above k for the exactness check (1.25: a quarter more rows than needed;
# 2 read 60 % more rows per query for nothing on a single-tenant 100k store, 1.1 widened
# too often on ties)
_TEXT_MIN_FACTOR = 1.25
_TEXT_LAST_CUT = 64_000


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression that ORs the query's words (quoted, so no operators)."""
    unique = list(dict.fromkeys(query_words(query)))
    return " OR ".join(f'"{w}"' for w in unique) if unique else None


def _text_hits(scope: Scope, scored: Sequence[tuple[float, sqlite3.Row]]) -> list[TextHit]:
    check_tenant(scope, [{"tenant": r["tenant"], "namespace": r["namespace"]} for _, r in scored])
    return [TextHit(r["id"], r["content"], r["t_created"], score) for score, r in scored]


class EmbeddedText:
    """The Store protocol's text methods over the in-memory index or FTS5."""

    def __init__(self, db: SQLiteAccess, caches: TenantCaches, text_index: str) -> None:
        self._db = db
        self._caches = caches
        self.text_index = text_index
        self._text_share: dict[str, float] = {}  # per tenant, see _TEXT_MIN_FACTOR

    def text_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        if k <= 0:
            return []
        if self.text_index == "fts5":
            return self._fts_pool(scope, query, k, view)
        terms = query_terms(query)
        if not terms:
            return []
        with self._db.lock:
            found, namespaces = self._caches.text_read(
                scope.tenant, lambda t: t.search(terms, k, scope.namespace, view)
            )
        check_tenant(scope, [{"tenant": scope.tenant, "namespace": ns} for ns in namespaces])
        return found

    def text_pool_scores(
        self, scope: Scope, query: str, k: int, view: TemporalView
    ) -> PoolScores | None:
        """The ``k``-row text pool's rows holding a scoring term of ``query`` with their BM25
        over the pool alone (before rounding), and the scoring terms of those rows it read:
        what retrieval's ``raw_scores`` computes over ``text_pool``'s rows, to the bit, from
        the in-memory index's postings without decoding the pool's texts (pool_bm25.py).
        None with FTS5 (no postings at hand). Not part of the Store contract (retrieval's
        ``ScoresPool`` asks for it)."""
        if self.text_index == "fts5":
            return None
        terms = query_terms(query)
        if k <= 0 or not terms:
            return PoolScores([], np.zeros(0, dtype=np.int64), np.zeros(0), {})
        scoring = list(dict.fromkeys(stemming.scoring_terms(query)))
        with self._db.lock:
            found, namespaces = self._caches.text_read(
                scope.tenant, lambda t: t.pool_scores(terms, scoring, k, scope.namespace, view)
            )
        check_tenant(scope, [{"tenant": scope.tenant, "namespace": ns} for ns in namespaces])
        return found

    def scoring_terms(self, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The scoring terms the tenant's loaded text index keeps for those of ``ids`` in the
        scope (none before it is loaded, none of another namespace): the pipeline's BM25
        re-scoring and coverage reuse them instead of tokenising the rows again. Not part of
        the Store contract (retrieval's ``KeepsTerms`` asks for it)."""
        with self._db.lock:
            texts = self._caches.texts.get(scope.tenant)
            if texts is None:
                return {}
            return self._caches.text_read(scope.tenant, lambda t: t.terms_of(ids, scope.namespace))

    def _fts_pool(self, scope: Scope, query: str, k: int, view: TemporalView) -> list[TextHit]:
        match = fts_match(query)
        if match is None:
            return []
        params = {**scope_params(scope), **view_params(view), "match": match}
        with self._db.lock:
            share = self._text_share.get(scope.tenant, 1.0)
            n = min(_TEXT_LAST_CUT, int(_TEXT_MIN_FACTOR * k / min(share, 1.0)))
            while n <= _TEXT_LAST_CUT:
                ranked = self._db.execute(q.TEXT_TOP_RANKED, {"match": match, "n": n}).fetchall()
                scores = {int(r[0]): float(r[1]) for r in ranked}
                rows = self._db.execute(
                    q.TEXT_FILTER_ROWS, {**params, "rowids": json.dumps(list(scores))}
                ).fetchall()
                if len(ranked) == n:  # a full cut: what share of it the scope could see
                    self._text_share[scope.tenant] = max(len(rows), 1) / n
                hits = sorted(
                    ((scores[r["rowid"]], r) for r in rows), key=lambda p: (-p[0], p[1]["id"])
                )[:k]
                # Exact when the index ran dry, or when the k-th hit beats the cut's score
                # (every visible row above the cut was fetched; ties at the cut were not).
                if len(ranked) < n or (len(hits) == k and hits[-1][0] > float(ranked[-1][1])):
                    return _text_hits(scope, hits)
                n *= 4
            rows = self._db.execute(q.TEXT_CANDIDATES, {**params, "k": k}).fetchall()
        return _text_hits(scope, [(float(r["score"]), r) for r in rows])
