"""The embedded text lane's index: per tenant, in memory, BM25 over exactly the view.

FTS5 ranks with statistics of every row it ever indexed: other tenants' rows and
rows written after a replay's ``as_of`` included. So which rows it puts in the
text pool depended on data the reader cannot see, and a replayed recall could
choose another pool than the original once more rows arrived. This index
keeps, per tenant, each row's stemmed words in postings and its view columns
in a ``RowTable``; a query scores every visible row with Okapi BM25 whose
document frequencies, row count and average length come from the visible rows
alone. The pool is then a function of the view, and the rows are scored with
numpy instead of a B-tree walk per match.

Tokens: every word, stemmed as ``attestor_arango.text.stemming`` does. The query
drops only very common words (``COMMON_WORDS``, shared with the FTS5 path), as
matching them ranks most of the index for no signal.
"""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Sequence

import numpy as np

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded.column import ObjectColumn
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.protocol import TextHit
from attestor_arango.text.stemming import stem, stems_and_terms, words

K1 = 1.2
B = 0.75

_PAIR = struct.Struct("=ii")  # row, frequency: native int32s, as numpy reads them

# Query-side only: words so common that OR-matching them scans most of the index.
# Deliberately narrower than stemming.STOPWORDS (which BM25 scoring drops):
# choosing candidates with that longer list measured worse on LoCoMo (turn R@10
# 0.892 -> 0.887, session R@5 0.939 -> 0.935), since words like "not" or "before"
# still pick useful candidates even when they do not score.
COMMON_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)


def query_words(query: str) -> list[str]:
    """The query's words without very common ones (all of them when nothing else is left)."""
    found = words(query)
    return [w for w in found if w not in COMMON_WORDS] or found


def query_terms(query: str) -> list[str]:
    """The query's distinct stems, in order, without very common words."""
    return list(dict.fromkeys(stem(w) for w in query_words(query)))


class TenantText:
    def __init__(self) -> None:
        self.rows = RowTable()
        # per-row columns out of the garbage collector's walk (column.py)
        self.contents = ObjectColumn()
        # each row's scoring terms, handed to BM25 re-scoring with the row (about 13 MB
        # per 100k short rows; re-tokenising 200 pool rows per query cost more than the
        # whole index lookup)
        self.terms = ObjectColumn()
        # each row's rowid in the SQLite file (-1: not known): reading rows by rowid
        # skips the id index, about half of a by-id read
        self.rowids = array("q")
        self.lengths = array("i")
        # term -> row, frequency, row, frequency, ... as int32 pairs: one compact buffer per
        # term (many terms occur once: ids, numbers), read by numpy without a copy. A
        # bytearray, not an array.array: the garbage collector tracks every array.array
        # (and so the dict holding them) but no bytearray, and a full collection walking
        # 105k postings of a 100k-row index took 66 ms, a stall in whatever process
        # embeds the store
        self.postings: dict[str, bytearray] = {}

    @property
    def n(self) -> int:
        return self.rows.n

    def add(
        self,
        memory_id: str,
        namespace: str,
        content: str,
        times: Sequence[int],
        rowid: int = -1,
    ) -> None:
        if memory_id in self.rows.pos:
            return
        i = self.rows.append(memory_id, namespace, times)
        self._index(i, content)
        self.rowids.append(rowid)

    def load(
        self,
        ids: Sequence[str],
        namespaces: Sequence[str],
        contents: Sequence[str],
        times: np.ndarray,
        rowids: Sequence[int] | None = None,
    ) -> None:
        """Fill an empty index; ``times`` holds t_created, t_expired, valid_from, valid_until."""
        self.rows.load(ids, namespaces, times)
        for i, content in enumerate(contents):
            self._index(i, content)
        self.rowids = array("q", [-1] * len(ids) if rowids is None else rowids)

    def _index(self, row: int, content: str) -> None:
        stems, terms = stems_and_terms(content)
        tf: dict[str, int] = {}
        for s in stems:
            tf[s] = tf.get(s, 0) + 1
        self.contents.append(content)
        self.terms.append(terms)
        self.lengths.append(sum(tf.values()))
        for term, f in tf.items():
            pair = _PAIR.pack(row, f)
            posting = self.postings.get(term)
            if posting is None:
                self.postings[term] = bytearray(pair)
                continue
            try:
                posting += pair
            except BufferError:  # a numpy view of it is still alive: extend a copy instead
                self.postings[term] = posting + pair

    def rowids_of(self, ids: Sequence[str]) -> dict[str, int]:
        """The known file rowids of those of ``ids`` the index holds."""
        pos, rowids = self.rows.pos, self.rowids
        found = {i: rowids[pos[i]] for i in ids if i in pos}
        return {i: r for i, r in found.items() if r >= 0}

    def terms_of(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The scoring terms of those of ``ids`` the index holds."""
        pos = self.rows.pos
        found = [i for i in ids if i in pos]
        return dict(zip(found, self.terms.take([pos[i] for i in found]), strict=True))

    def set_expired(self, memory_id: str, t_expired: int) -> None:
        self.rows.set_expired(memory_id, t_expired)

    def search(
        self, terms: Sequence[str], k: int, namespace: str | None, view: TemporalView
    ) -> tuple[list[TextHit], set[str]]:
        """The k visible rows with the best BM25 over the view; score desc, t_created desc, id asc.

        Also returns the namespaces of the rows it found (the store checks them
        against the scope). Each row's score sums its terms' parts in query order,
        so it is the same float whatever else the index holds.
        """
        none: tuple[list[TextHit], set[str]] = ([], set())
        if k <= 0 or not terms or self.n == 0:
            return none
        mask = self.rows.visible_mask(namespace, view)
        if mask is None:
            return none
        visible = int(np.count_nonzero(mask))
        if visible == 0:
            return none
        lengths = np.frombuffer(self.lengths, dtype=np.int32)[: self.n]
        avgdl = int(lengths[mask].sum(dtype=np.int64)) / visible
        hit_rows: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for term in dict.fromkeys(terms):
            posting = self.postings.get(term)
            if posting is None:
                continue
            pairs = np.frombuffer(posting, dtype=np.int32).reshape(-1, 2)
            seen = mask[pairs[:, 0]]
            rows = pairs[seen, 0]
            if rows.size == 0:
                continue
            tf = pairs[seen, 1].astype(np.float64)
            idf = math.log(1.0 + (visible - rows.size + 0.5) / (rows.size + 0.5))
            norm = K1 * (1.0 - B + B * lengths[rows] / avgdl)
            hit_rows.append(rows)
            parts.append(idf * tf * (K1 + 1) / (tf + norm))
        if not hit_rows:
            return none
        rows, where = np.unique(np.concatenate(hit_rows), return_inverse=True)
        scores = np.bincount(where, weights=np.concatenate(parts))  # in query-term order per row
        if rows.size > k:  # the k-th best score, and every row tied with it
            keep = scores >= np.partition(scores, rows.size - k)[rows.size - k]
            rows, scores = rows[keep], scores[keep]
        created = (-self.rows.t_created[rows]).tolist()
        at = rows.tolist()
        # score desc, t_created desc, id asc as one natural tuple order (ids are unique,
        # so the row number after them never decides)
        order = zip((-scores).tolist(), created, self.rows.ids.take(rows), at, strict=True)
        ranked = sorted(order)[:k]
        namespaces = self.rows.namespaces(rows)
        picked = [r for *_, r in ranked]
        texts, row_terms = self.contents.take(picked), self.terms.take(picked)
        hits = [
            TextHit(i, text, -t, -s, found)
            for (s, t, i, _), text, found in zip(ranked, texts, row_terms, strict=True)
        ]
        return hits, namespaces
