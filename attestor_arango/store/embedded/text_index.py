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
drops only very common words (``CANDIDATE_STOPWORDS``, shared with the FTS5 path), as
matching them ranks most of the index for no signal.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from attestor_arango.scope import TemporalView
from attestor_arango.store.embedded import text_prune, text_rank
from attestor_arango.store.embedded.column import (
    SEP,
    BlobColumn,
    ObjectColumn,
    pack_strings,
)
from attestor_arango.store.embedded.indexfile import Generation
from attestor_arango.store.embedded.pool_bm25 import pool_scores, term_counts
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.protocol import PoolScores, TextHit
from attestor_arango.text import bm25
from attestor_arango.text.stemming import Vocabulary, stem, stems_and_terms, words
from attestor_arango.text.stopwords import CANDIDATE_STOPWORDS

# sections of a persisted index read a few rows at a time: their blocks are checked as read
LAZY = ("contents", "terms", "p.pairs")
_PAIR = struct.Struct("=ii")  # row, frequency: native int32s, as numpy reads them


def query_words(query: str) -> list[str]:
    """The query's words without very common ones (all of them when nothing else is left)."""
    found = words(query)
    return [w for w in found if w not in CANDIDATE_STOPWORDS] or found


def query_terms(query: str) -> list[str]:
    """The query's distinct stems, in order, without very common words."""
    return list(dict.fromkeys(stem(w) for w in query_words(query)))


class TenantText:
    def __init__(self) -> None:
        self.rows = RowTable()
        # per-row columns out of the garbage collector's walk (column.py)
        self.contents: ObjectColumn | BlobColumn = ObjectColumn()
        # each row's scoring terms, handed to BM25 re-scoring with the row (about 13 MB
        # per 100k short rows; re-tokenising 200 pool rows per query cost more than the
        # whole index lookup)
        self.terms: ObjectColumn | BlobColumn = ObjectColumn()
        # each row's rowid in the SQLite file (-1: not known): reading rows by rowid
        # skips the id index, about half of a by-id read
        self.rowids = array("q")
        self.lengths = array("i")
        # each row's number of scoring terms (-1: a persisted row not counted yet; pool_bm25)
        self.term_counts = array("i")
        # term -> row, frequency, row, frequency, ... as int32 pairs: one compact buffer per
        # term (many terms occur once: ids, numbers), read by numpy without a copy. A
        # bytearray, not an array.array: the garbage collector tracks every array.array
        # (and so the dict holding them) but no bytearray, and a full collection walking
        # 105k postings of a 100k-row index took 66 ms, a stall in whatever process
        # embeds the store
        self.postings: dict[str, bytearray] = {}
        # what the index reflects, and what its file holds (persisted.py; None: unknown / none)
        self.generation: Generation | None = None
        self.saved: Generation | None = None
        self.saved_rows = 0
        # a persisted index (text_sections.py): term -> number, and per term number its
        # slice of one read-only (row, frequency) int32 array; ``postings`` then holds
        # only what rows added since brought
        self._base_vocab = np.zeros(0, dtype=np.uint8)  # its terms joined by newlines
        self._base_terms: dict[str, int] = {}
        self._base_start = np.zeros(1, dtype=np.int64)
        self._base_pairs = np.zeros((0, 2), dtype=np.int32)
        # the file's lazy block checks of the postings (IndexFile.check; None: verified)
        self._check: Callable[[str, np.ndarray, np.ndarray], None] | None = None
        self._norms = text_rank.LengthNorms()
        self._kept: text_rank.KeptTerms | None = None  # the blob's decoded rows (``_terms``)
        self._checked = bytearray()  # per persisted term: 1 once its postings were checked
        # the summed lengths of the first ``_total_at`` rows (``_total_length``)
        self._total = 0
        self._total_at = 0

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
        if memory_id in self.rows:
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
        """Fill an empty index; ``times`` holds t_created, t_expired, valid_from, valid_until.

        In bulk: the rows are tokenised once and their postings built by one numpy
        sort, into the same arrays a persisted index maps (text_sections.py), with
        the texts and terms packed as blobs. Rebuilding a 100k-row index one ``add``
        at a time spent about half its time appending to the per-term buffers; the
        result is the same index (the same postings, scores and file bytes).
        """
        if self.n:
            raise RuntimeError("load() fills an empty index; use add() afterwards")
        n = len(ids)
        vocabulary = Vocabulary()
        occurrences = array("i")  # the term number of every word of every row, in order
        lengths = array("i")
        row_terms: list[tuple[str, ...]] = []
        for content in contents:
            numbers, terms = vocabulary.read(content)
            occurrences.extend(numbers)
            lengths.append(len(numbers))
            row_terms.append(terms)
        number = vocabulary.numbers
        contents_blob, contents_off = pack_strings(contents, tuples=False)
        terms_blob, terms_off = pack_strings(row_terms, tuples=True)
        if any(t == ("",) for t in row_terms) or int(
            np.count_nonzero(terms_blob == SEP.encode()[0])
        ) != sum(max(len(t) - 1, 0) for t in row_terms):  # pragma: no cover - words never do
            raise ValueError("a term holds the separator")
        vocab = sorted(number)
        order = np.empty(len(vocab), dtype=np.int64)  # term number -> rank in ``vocab``
        order[[number[t] for t in vocab]] = np.arange(len(vocab))
        per_row = np.frombuffer(lengths, dtype=np.int32)
        word_rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
        keys = order[np.frombuffer(occurrences, dtype=np.int32)] * max(n, 1) + word_rows
        pairs_key, freq = np.unique(keys, return_counts=True)  # by term, then by row
        term_of, row_of = np.divmod(pairs_key, max(n, 1))
        start = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_of, minlength=len(vocab)), out=start[1:])
        self.rows.load(ids, namespaces, times)
        self.contents = BlobColumn(contents_blob, contents_off, False)
        self.terms = BlobColumn(terms_blob, terms_off, True)
        self.lengths = lengths
        self.term_counts = array("i", map(len, row_terms))
        self.rowids = array("q", [-1] * n if rowids is None else rowids)
        self._base_vocab = np.frombuffer("\n".join(vocab).encode(), dtype=np.uint8)
        self._base_terms = {term: j for j, term in enumerate(vocab)}
        self._base_start = start
        self._base_pairs = np.stack([row_of, freq], axis=1).astype(np.int32)

    def _index(self, row: int, content: str) -> None:
        stems, terms = stems_and_terms(content)
        tf: dict[str, int] = {}
        for s in stems:
            tf[s] = tf.get(s, 0) + 1
        self.contents.append(content)
        self.terms.append(terms)
        self.lengths.append(sum(tf.values()))
        self.term_counts.append(len(terms))
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

    def _pairs(self, term: str) -> np.ndarray | None:
        """The term's (row, frequency) pairs in row order, persisted ones first."""
        added = self.postings.get(term)
        tail = None if added is None else np.frombuffer(added, dtype=np.int32).reshape(-1, 2)
        j = self._base_terms.get(term)
        if j is None:
            return tail
        lo, hi = int(self._base_start[j]), int(self._base_start[j + 1])
        if self._check is not None and not self._checked[j]:
            width = self._base_pairs.strides[0]
            self._check("p.pairs", np.array([lo * width]), np.array([hi * width]))
            self._checked[j] = 1  # its blocks stay verified: a second read needs no check
        base = self._base_pairs[lo:hi]
        return base if tail is None else np.concatenate([base, tail])

    def _total_length(self) -> int:
        """The summed lengths of every row (rows are only appended: kept per row count)."""
        n = self.n
        if self._total_at != n:
            lengths = np.frombuffer(self.lengths, dtype=np.int32)[:n]
            self._total = int(lengths.sum(dtype=np.int64))
            self._total_at = n
        return self._total

    def rowids_of(self, ids: Sequence[str]) -> dict[str, int]:
        """The known file rowids of those of ``ids`` the index holds."""
        rowids = self.rowids
        found = {i: rowids[row] for i, row in self.rows.rows_of(ids)}
        return {i: r for i, r in found.items() if r >= 0}

    def terms_of(
        self, ids: Sequence[str], namespace: str | None = None
    ) -> dict[str, tuple[str, ...]]:
        """The scoring terms of those of ``ids`` the index holds in ``namespace`` (any: None).

        Each id is looked up once (a recall asks for ~200: a binary search each)."""
        have, rows = self.rows.held(ids, namespace)
        return dict(zip(have, self._terms().take(rows), strict=True))

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
        found = self._best(terms, k, namespace, view)
        if found is None:
            return [], set()
        matched, at, namespaces = found
        rows, ids, created = matched.rows[at], self.rows.take_ids, self.rows.t_created
        texts, scores = self.contents.take(rows), matched.scores[at].tolist()
        return list(map(TextHit, ids(rows), texts, created[rows].tolist(), scores)), namespaces

    def pool_scores(
        self,
        terms: Sequence[str],
        scoring: Sequence[str],
        k: int,
        namespace: str | None,
        view: TemporalView,
    ) -> tuple[PoolScores, set[str]]:
        """``search``'s rows holding a ``scoring`` term with their BM25 over the pool alone
        (pool_bm25.py: the floats of retrieval's ``raw_scores`` over that pool, with only a
        few rows' terms decoded and no text), in pool order, and the namespaces of the rows
        scored. The pool's term frequencies come from the match (text_rank.py).

        The rows come in index order, not the pool's: a row's BM25 over the pool does not
        depend on where the row stands in it, and the lane orders the scores itself
        (retrieval's ``ranked_by_backend``), so the pool is not sorted first."""
        found = self._best(terms, k, namespace, view, ordered=False) if scoring else None
        if found is None:  # nothing would score, or nothing matched
            return PoolScores([], np.zeros(0, dtype=np.int64), np.zeros(0), {}), set()
        matched, at, namespaces = found
        rows = matched.rows[at]
        lengths = term_counts(self.term_counts, rows, self.terms)
        postings = partial(matched.postings_of, fallback=self.postings_of)
        places, scores, decoded = pool_scores(rows, lengths, scoring, postings, self._terms(), True)
        ids = self.rows.take_ids(rows[places])
        held = dict(zip(self.rows.take_ids(rows[list(decoded)]), decoded.values(), strict=True))
        return PoolScores(ids, self.rows.t_created[rows[places]], scores, held), namespaces

    def _terms(self) -> text_rank.KeptTerms | ObjectColumn:
        """The terms column to read rows from: a blob's with its decoded rows kept."""
        if isinstance(self.terms, ObjectColumn):  # already Python tuples: nothing to keep
            return self.terms
        if self._kept is None or self._kept.column is not self.terms:
            self._kept = text_rank.KeptTerms(self.terms)
        return self._kept

    def postings_of(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The term's postings: rows (ascending) and their frequencies."""
        pairs = self._pairs(term)
        return None if pairs is None else (pairs[:, 0], pairs[:, 1])

    def _best(
        self,
        terms: Sequence[str],
        k: int,
        namespace: str | None,
        view: TemporalView,
        ordered: bool = True,
    ) -> tuple[text_rank.Matched, np.ndarray, set[str]] | None:
        """The query's matches, the places (into ``rows``) of the k best in order (score
        desc, t_created desc, id asc) and the namespaces of the rows scored; None: none.

        ``ordered=False``: the k best in any order (ascending places) when no tie at the
        cut needs the order to decide which rows are in: the usual case, with no sort."""
        matched = self._matched(terms, k, namespace, view) if k > 0 else None
        if matched is None:
            return None
        rows, scores = matched.rows, matched.scores
        if rows.size > k:  # the k-th best score, and every row tied with it
            kept = (scores >= np.partition(scores, rows.size - k)[rows.size - k]).nonzero()[0]
        else:
            kept = np.arange(rows.size)
        namespaces = self.rows.namespaces(rows[kept])
        if not ordered and kept.size <= k:  # every row above the cut, none tied past it
            return matched, kept, namespaces
        order = text_rank.best_first(
            scores[kept],
            self.rows.t_created[rows[kept]],
            k,
            lambda places: self.rows.take_ids(rows[kept[places]]),
        )
        return matched, kept[order], namespaces

    def _posting_size(self, term: str) -> int:
        """How many rows hold the term (its postings' length, without reading them)."""
        added = self.postings.get(term)
        size = 0 if added is None else len(added) // _PAIR.size
        j = self._base_terms.get(term)
        return size if j is None else size + int(self._base_start[j + 1] - self._base_start[j])

    def _matched(
        self, terms: Sequence[str], k: int, namespace: str | None, view: TemporalView
    ) -> text_rank.Matched | None:
        """Every visible row holding a query term that can be among the ``k`` best (all of
        them, unless text_prune.py's bounds rule some out exactly) with its BM25 over the
        view (text_rank.py); None when no visible row holds one."""
        if not terms or self.n == 0:
            return None
        lengths = np.frombuffer(self.lengths, dtype=np.int32)[: self.n]
        mask: np.ndarray | None = None
        if self.rows.all_visible(namespace, view):  # no mask to build, none to read through
            visible, total = self.n, self._total_length()
        else:
            mask = self.rows.visible_mask(namespace, view)
            if mask is None:
                return None
            visible = int(np.count_nonzero(mask))
            if visible == 0:
                return None
            total = int(lengths[mask].sum(dtype=np.int64))
        avgdl = total / visible
        unique = list(dict.fromkeys(terms))
        norms = self._norms.get(lengths, avgdl, sum(map(self._posting_size, unique)))
        postings: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        found: list[text_prune.TermHits] = []
        for term in unique:
            pairs = self._pairs(term)
            postings[term] = None
            if pairs is None:
                continue
            if mask is None:
                rows, tf_raw = pairs[:, 0], pairs[:, 1]
            else:
                seen = mask[pairs[:, 0]]
                rows, tf_raw = pairs[seen, 0], pairs[seen, 1]
            if rows.size == 0:
                continue
            postings[term] = (rows, tf_raw)
            found.append(text_prune.TermHits(rows, tf_raw, bm25.idf(visible, rows.size)))
        if not found:
            return None

        def norm_of(rows: np.ndarray) -> np.ndarray:
            return bm25.length_norm(lengths[rows], avgdl) if norms is None else norms[rows]

        best = text_prune.candidates(found, k, norm_of, self.n)
        rows, scores = text_prune.score_all(found, norm_of, self.n) if best is None else best
        return text_rank.Matched(postings, rows, scores)
