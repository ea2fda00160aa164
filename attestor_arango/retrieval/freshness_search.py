"""Freshness's searches (freshness.py): which candidates may be an update, and the nearest
later (or earlier) statement of an anchor, a row at a time in Python.

A search visits a few rows in value order and stops; numpy masks over every row cost ~20
calls on small arrays a search, and sorting every candidate by the whole tie key a Python
call a row. The comparisons are the step's own, on the same floats, in the same order
(``tests/test_freshness_nearest.py`` compares them with the numpy masks they replaced).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.temporal import US_PER_DAY
from attestor_arango.text.stemming import scoring_terms

_KNOWN_TERMS = scoring_terms.known


def known_terms(c: Candidate) -> tuple[str, ...]:
    """``c.content_terms()``, the same tuple: a text tokenised before is read from the
    memo's dict by the memory's field (``scoring_terms.known``; a model attribute and the
    memo's Python call cost ~1,000 instructions a candidate), and kept on the candidate."""
    terms = c.terms
    if terms is None:
        terms = _KNOWN_TERMS(c.fields["content"])
        if terms is None:
            return c.content_terms()
        c.terms = terms
    return terms


def first_places(items: Sequence[Candidate], before: Sequence[float], places: int) -> list[int]:
    """``heapq.nsmallest(places, range(n), key=tie key)`` of the candidates (relevance desc,
    t_created desc, id asc), the same rows in the same order: when every relevance is
    finite, only the rows at or above the ``places``-th highest relevance can be among
    them, so only those few are sorted by the whole key (a Python key per row was ~190k
    instructions a run at ~85 candidates). A NaN (no order) takes heapq's own way."""

    def key(k: int) -> tuple[float, int, str]:
        return (-before[k], -items[k].t_created, items[k].id)

    if places >= len(items) or (total := sum(before)) - total != 0:  # a NaN or an infinity
        return heapq.nsmallest(places, range(len(items)), key=key)
    floor = sorted(before, reverse=True)[places - 1]
    return sorted([k for k, r in enumerate(before) if r >= floor], key=key)[:places]


class AskedWords:
    """Which of the query's scoring terms each candidate holds, read only for the rows asked
    about (a candidate's words are tokenised at most once, and only when a search reaches
    it), as one integer per row, a bit a term, so that rows compare as sets with ``==``.
    """

    def __init__(self, items: Sequence[Candidate], asked: Sequence[str]) -> None:
        # at most 62 distinct terms, so that every set fits an int64; a longer query's
        # later terms are not compared
        self._bit = {t: 1 << k for k, t in enumerate(dict.fromkeys(asked)) if k < 62}
        self._items = items
        self._bits = [-1] * len(items)  # -1: not read yet

    def holds_all(self, k: int, j: int) -> bool:
        """Whether row ``j`` holds every query term row ``k`` holds."""
        return not self.row(k) & ~self.row(j)

    def row(self, k: int) -> int:
        """The query-term set of row ``k``, read when first asked."""
        v = self._bits[k]
        if v < 0:
            v, bit = 0, self._bit  # the query terms it holds: a set intersection
            for t in bit.keys() & known_terms(self._items[k]):  # the terms as they are
                v |= bit[t]
            self._bits[k] = v
        return v


def one_subject(older: int, newer: int) -> bool:
    """Whether two statements, holding the ``older`` and ``newer`` sets of the query's words
    (``AskedWords.row``), may be about one subject (so the newer may update the older): the
    same set, or a newer one that holds none of the query's words while the older holds
    some. Seconds apart or sessions apart alike: a month later, "My brother lives in
    Glasgow" is still not news about the sister the query asks about. A paraphrased
    update often names its subject in other words
    ("My car is a Nissan Leaf", then "These days I get around in a Hyundai Ioniq", asked
    "What car do I have?"); a newer statement that keeps some of the query's words but not
    the older one's ("My sister lives in Leeds", then "My brother lives in Glasgow", asked
    "Where does my sister live?") or adds one is about another subject."""
    return older == newer or (newer == 0 and older != 0)


def desc_order(values: np.ndarray) -> list[int]:
    """The rows by value, highest first, the first row first on a tie, and every NaN before
    them in row order: the order in which ``np.argmax`` over the rows left takes them (it
    ranks a NaN highest, where a sort puts it last). numpy's stable argsort: ~25k
    instructions at ~85 rows, where Python's sort with a key was ~45k."""
    rows: list[int] = (-values).argsort(kind="stable").tolist()
    if rows and (last := float(values[rows[-1]])) != last:  # a NaN: they are sorted last
        nan: list[int] = np.flatnonzero(values != values).tolist()
        rows = nan + rows[: len(rows) - len(nan)]
    return rows


class Rows:
    """The candidates' times, sessions and query words as a search reads them: a row at a
    time, in Python (a search visits a few rows in value order and stops, where masks over
    every row were ~20 numpy calls on small arrays a search), each row's session read from
    its memory when first needed."""

    def __init__(self, items: Sequence[Candidate], words: AskedWords | None) -> None:
        self.items = items
        self.vf = [c.valid_from for c in items]
        self.tc = [c.t_created for c in items]
        self.words = words
        self._sessions: dict[int, str | None] = {}

    def session(self, k: int) -> str | None:
        sessions = self._sessions
        if k in sessions:
            return sessions[k]
        s: str | None = self.items[k].fields["provenance"].session_id
        sessions[k] = s
        return s

    def same_conversation(self, j: int, r: int) -> bool:
        """Whether row ``r`` was said in ``j``'s conversation: its session when both name one,
        else (a memory without a session) within a day of it.

        With the query's words (``words``), two memories without sessions written within a
        day of each other as they were said (``valid_from`` equal to ``t_created``: what
        ``add`` without a valid_from stores) are not one conversation: a script or an agent
        writes an update seconds after the fact it updates ("My bike is a road bike", then
        "My bike is a gravel bike"), so whether they state one subject is left to their
        words, as for any other pair (``one_subject``, read only for the rows a search
        reaches). A dated record of a chat, imported turn by turn with its message times,
        stays one conversation a day.
        """
        s_j = self.session(j)
        if s_j is not None and (s_r := self.session(r)) is not None:
            return s_r == s_j
        vf, tc = self.vf, self.tc
        if not abs(vf[r] - vf[j]) < US_PER_DAY:
            return False
        return not (
            s_j is None
            and self.words is not None
            and vf[j] == tc[j]
            and vf[r] == tc[r]
            and self.session(r) is None
        )

    def nearest(self, values: np.ndarray, anchor: int, later: bool = True) -> int | None:
        """The row of the highest value (the first on a tie; a NaN before all, as argmax
        takes it) said ``later`` than ``anchor`` (or earlier), in another conversation
        (``same_conversation``), and, with the query's words, able to be about ``anchor``'s
        subject (``one_subject``); None when no row is. The words of a row are read only
        when it is the best one left but for the anchor's own session.

        The tests are pure, so their order decides only their cost: a row of the anchor's
        own session is passed over at once (a session each: one conversation), then the
        words (most rows the time test leaves fail on them), then the whole conversation
        test (sessions, days and times)."""
        vf, tc, words = self.vf, self.tc, self.words
        t0, t1 = vf[anchor], tc[anchor]
        mine = -1 if words is None else words.row(anchor)
        own = self.session(anchor)
        for k in desc_order(values):
            v = vf[k]
            if later:  # (valid_from, t_created) after the anchor's, as tuples compare
                if v < t0 or (v == t0 and tc[k] <= t1):
                    continue
            elif v > t0 or (v == t0 and tc[k] >= t1):
                continue
            if own is not None and self.session(k) == own:  # same_conversation, at once
                continue
            if words is not None:
                theirs = words.row(k)
                if not (one_subject(mine, theirs) if later else one_subject(theirs, mine)):
                    continue
            if self.same_conversation(anchor, k):
                continue
            return k
        return None
