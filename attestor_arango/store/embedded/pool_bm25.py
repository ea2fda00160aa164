"""BM25 of a text pool over the pool alone, computed from the index's postings.

The pipeline re-scores the text index's pool with Okapi BM25 whose statistics (row
count, document frequencies, average length) come from the pool's rows only
(``retrieval/text_lane.py``, ``raw_scores``: the reference). Done there, every pool row's
text and terms were decoded and counted in Python; the embedded index already has each
row's term frequencies in its postings, so this computes the same floats with numpy and
decodes the terms of a few rows only:

- a row's length is the number of its scoring terms (counted in the terms blob);
- a query term's frequency in a row is its posting's, unless the term is also the stem
  of a stop word: postings count every word, scoring skips stop words, so those rows'
  terms are decoded and counted;
- a row's parts are summed in query-term order, except that a row holding more than two
  query terms sums them in order of their first place in the row (``raw_scores`` does;
  two floats add alike in either order, three may not), so those rows are decoded too.

Every float is made by ``text/bm25.py``'s functions in ``raw_scores``' order. The rows
summed with numpy hold at most two query terms: their other parts are +0.0, which changes
no float, and two floats sum alike in any order, so one reduction gives the sequential sum
exactly (the rows of more terms are summed in Python, in their own order).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from functools import cache
from typing import Protocol

import numpy as np

from attestor_arango.store.embedded.text_rank import Postings
from attestor_arango.text import bm25
from attestor_arango.text.stemming import stem
from attestor_arango.text.stopwords import STOPWORDS


class TermColumn(Protocol):
    """What is read of the index's per-row scoring terms (``column.py``'s columns)."""

    def take(self, rows: np.ndarray) -> list[tuple[str, ...]]: ...
    def sizes(self, rows: np.ndarray) -> np.ndarray: ...
    def __len__(self) -> int: ...  # the index's rows: above every row and posting


def term_counts(known: array, rows: np.ndarray, terms: TermColumn) -> np.ndarray:
    """The number of scoring terms of each of ``rows`` (int64) from the index's per-row
    counts ``known`` (int32, -1: not counted yet), counting in ``terms`` (and noting in
    ``known``) only the rows not counted yet: a persisted index's rows, once each."""
    kept = np.frombuffer(known, dtype=np.int32)
    counts = kept[rows].astype(np.int64)
    todo = (counts < 0).nonzero()[0]
    if todo.size:
        counts[todo] = terms.sizes(rows[todo])
        kept[rows[todo]] = counts[todo]
    return counts


@cache
def stop_stems() -> frozenset[str]:
    """The stems of the stop words: a term among them may count words scoring skips."""
    return frozenset(stem(w) for w in STOPWORDS)


# at most this many entries (the index's rows plus the postings) per term with postings,
# the frequencies are gathered in one pass over every term's postings (``_gathered``)
# instead of a binary search per term: a numpy call on a small array costs ~10k
# instructions, and the search is ~8 of them a term (1k rows, ~5 terms of ~100 postings:
# ~290k -> ~180k a recall); an index of 100k rows has 10-100x longer postings
DENSE_ENTRIES = 4096


def _frequencies(rows: np.ndarray, postings: list[Postings | None], size: int) -> np.ndarray:
    """(terms, rows): each row's frequency in each term's postings (rows ascending, their
    frequencies), 0 where it has none (``rows``: distinct; ``size``: above every row and
    posting), as float64: the counts are small integers, exact as floats, and BM25 takes
    them as floats (no conversion of the matrix to make). On small postings gathered
    through a position array (``_gathered``); else a binary search per term (O(postings)
    like the index's own ranking; one search over all terms' postings joined cost 5-7x
    more at 20k-200k postings a term)."""
    held = [(j, found) for j, found in enumerate(postings) if found is not None and found[0].size]
    if held and size + sum(found[0].size for _, found in held) <= DENSE_ENTRIES * len(held):
        return _gathered(rows, len(postings), held, size)
    tf = np.zeros((len(postings), rows.size))
    typed: dict[np.dtype, np.ndarray] = {}  # ``rows`` in the postings' own dtype (int32):
    # searched as int64, every term's postings were copied to int64 first
    for j, (found_rows, freqs) in held:
        keys = typed.get(found_rows.dtype)
        if keys is None:
            keys = typed[found_rows.dtype] = rows.astype(found_rows.dtype, copy=False)
        at = np.minimum(np.searchsorted(found_rows, keys), found_rows.size - 1)
        tf[j] = np.where(found_rows[at] == keys, freqs[at], 0)
    return tf


def _gathered(
    rows: np.ndarray, terms: int, held: list[tuple[int, Postings]], size: int
) -> np.ndarray:
    """``_frequencies`` of ``terms`` terms from the postings ``held`` (term place, postings)
    in one pass over them all: each posting's place among ``rows`` read from a position
    array, in which a row outside the pool points to one spare column past the pool's
    (written, then left out of the view returned: no mask to build)."""
    spare = rows.size
    place = np.full(size, spare, dtype=np.intp)
    place[rows] = np.arange(spare)
    at = place[np.concatenate([found[0] for _, found in held])]
    term = np.repeat([j for j, _ in held], [found[0].size for _, found in held])
    tf = np.zeros((terms, spare + 1))
    tf[term, at] = np.concatenate([found[1] for _, found in held])
    return tf[:, :spare]


def pool_scores(
    rows: np.ndarray,
    lengths: np.ndarray,
    query: Sequence[str],
    postings_of: Callable[[str], Postings | None],
    terms: TermColumn,
    distinct: bool = False,
    k1: float = bm25.K1,
    b: float = bm25.B,
) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[str, ...]]]:
    """BM25 of the pool ``rows`` (with their numbers of scoring terms, ``lengths``) for the
    distinct scoring terms ``query``, statistics from the pool alone (a repeated row counts
    once, at its first place; ``distinct``: the caller knows none repeats). ``postings_of``:
    a term's postings as (rows ascending, frequencies), those of the pool's rows at least.

    Returns the pool places (into ``rows``, ascending) of the rows holding a query term, their
    scores (before rounding) and the terms decoded on the way, by pool place.
    """
    if not query or rows.size == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0), {}
    places = None  # the pool's places of the rows scored, where a row repeats
    if not distinct and len(set(rows.tolist())) < rows.size:  # the index never repeats one
        places = np.sort(np.unique(rows, return_index=True)[1])
        rows, lengths = rows[places], lengths[places]
    n = rows.size
    avgdl = int(lengths.sum()) / n or 1.0
    tf = _frequencies(rows, [postings_of(w) for w in query], len(terms))  # (terms, rows)
    present = tf != 0  # counted by summing (np.count_nonzero by axis is several calls)
    count = present.sum(axis=0)
    stops = [j for j, w in enumerate(query) if w in stop_stems()]
    # rows whose terms must be read: more than two terms, or a stop word's stem counted
    reread = count > 2
    if stops:
        reread |= present[stops].any(axis=0)
    at = reread.nonzero()[0]
    if at.size:
        read_rows = rows[at]
        decoded = dict(zip(read_rows.tolist(), terms.take(read_rows), strict=True))
    else:
        decoded = {}
    if stops and at.size:
        for p, row in zip(at.tolist(), decoded, strict=True):
            for j in stops:
                tf[j, p] = decoded[row].count(query[j])
        present = tf != 0
        count = present.sum(axis=0)
    df = present.sum(axis=1).tolist()
    norm = bm25.length_norm(lengths, avgdl, k1, b)
    # each term's part of every row (0.0 where the row lacks it), elementwise as raw_scores
    weights = np.array([[bm25.idf(n, d) if d else 0.0] for d in df])
    parts = bm25.term_score(weights, tf, norm[None, :], k1)
    # every row's parts summed: a row of two terms or fewer has at most two parts that are
    # not +0.0, and those sum to the same float in any order (adding +0.0 changes none) ...
    scores = parts.sum(axis=0)
    # ... but a row of more than two terms in order of their first place in the row: the
    # rows read (a stop stem's row among them)
    if at.size:
        found, values = tf[:, at].T.tolist(), parts[:, at].T.tolist()
        for p, row, freqs, part in zip(at.tolist(), decoded, found, values, strict=True):
            toks = decoded[row]
            score = 0.0
            for j in sorted(
                (j for j, f in enumerate(freqs) if f), key=lambda j: toks.index(query[j])
            ):
                score += part[j]
            scores[p] = score
    hit = count.nonzero()[0]
    kept = scores[hit]
    if places is not None:
        hit, at = places[hit], places[at]
    return hit, kept, dict(zip(at.tolist(), decoded.values(), strict=True))
