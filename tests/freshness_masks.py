"""Freshness's searches as numpy masks over every row: the general path the step ran until
session 25 (f97eae4), kept here as the reference that ``tests/test_freshness_few.py`` and
``tests/test_freshness_nearest.py`` compare the row-at-a-time searches with, bit for bit."""

from __future__ import annotations

from collections.abc import Container, Sequence

import numpy as np

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.freshness_search import one_subject  # unchanged: shared
from attestor_arango.retrieval.temporal import US_PER_DAY


class AskedWords:
    """Which of the query's scoring terms each candidate holds, read only for the rows asked
    about (a candidate's words are tokenised at most once, and only when a memory without a
    session said the same day as a tested statement needs them), as one integer per row,
    a bit a term, so that rows compare as sets with ``==``.
    """

    def __init__(self, items: Sequence[Candidate], asked: Sequence[str]) -> None:
        # at most 62 distinct terms, so that every set fits an int64; a longer query's
        # later terms are not compared
        self._bit = {t: 1 << k for k, t in enumerate(dict.fromkeys(asked)) if k < 62}
        self._items = items
        self._bits = np.full(len(items), -1, dtype=np.int64)  # -1: not read yet

    def holds_all(self, k: int, j: int) -> bool:
        """Whether row ``j`` holds every query term row ``k`` holds."""
        return not self.row(k) & ~self.row(j)

    def row(self, k: int) -> int:
        """The query-term set of row ``k``, read when first asked."""
        v = int(self._bits[k])
        if v < 0:
            v, bit = 0, self._bit  # the query terms it holds: a set intersection
            for t in bit.keys() & set(self._items[k].content_terms()):
                v |= bit[t]
            self._bits[k] = v
        return v


def later_mask(whens: np.ndarray, t: tuple[int, int]) -> np.ndarray:
    """Which rows of ``whens`` ((valid_from, t_created) per row) come after ``t``, as
    tuples compare: a later valid_from, or the same one created later."""
    vf, tc = whens[:, 0], whens[:, 1]
    return (vf > t[0]) | ((vf == t[0]) & (tc > t[1]))


def earlier_mask(whens: np.ndarray, t: tuple[int, int]) -> np.ndarray:
    vf, tc = whens[:, 0], whens[:, 1]
    return (vf < t[0]) | ((vf == t[0]) & (tc < t[1]))


def best(values: np.ndarray, mask: np.ndarray) -> int:
    """The row of the highest value among ``mask`` (the first such row on a tie), as
    ``max(rows, key=lambda k: (values[k], -k))`` would pick it; ``mask`` is not empty."""
    return int(np.argmax(np.where(mask, values, -np.inf)))


def session_codes(items: Sequence[Candidate]) -> np.ndarray:
    """Each candidate's session as an integer (-1: none), equal codes for equal ids, so
    ``same_conversation`` compares arrays instead of strings."""
    codes: dict[str, int] = {}
    out = []
    for c in items:
        sid = c.fields["provenance"].session_id
        out.append(-1 if sid is None else codes.setdefault(sid, len(codes)))
    return np.array(out, dtype=np.int64)


def same_conversation(
    sessions: np.ndarray, j: int, whens: np.ndarray, asked: AskedWords | None = None
) -> np.ndarray:
    """Which candidates were said in ``j``'s conversation: its session when both name one,
    else (a memory without a session) within a day of it. ``sessions``: ``session_codes``.

    With ``asked`` (the query's terms), two memories without sessions written within a day
    of each other as they were said (``valid_from`` equal to ``t_created``: what ``add``
    without a valid_from stores) are not one conversation: a script or an agent writes an
    update seconds after the fact it updates ("My bike is a road bike", then "My bike is a
    gravel bike"), so whether they state one subject is left to their words, as for any
    other pair (``one_subject``, read only for the rows a search reaches: ``nearest``).
    A dated record of a chat, imported turn by turn with its message times, stays one
    conversation a day.
    """
    near = np.abs(whens[:, 0] - whens[j, 0]) < US_PER_DAY
    if sessions[j] < 0 and asked is not None and whens[j, 0] == whens[j, 1]:
        near &= ~((sessions < 0) & (whens[:, 0] == whens[:, 1]))
    if sessions[j] < 0:
        return near
    return np.where(sessions >= 0, sessions == sessions[j], near)


def nearest(
    values: np.ndarray,
    mask: np.ndarray,
    anchor: int,
    asked: AskedWords | None,
    later: bool = True,
) -> int | None:
    """The row of the highest value among ``mask`` (the first on a tie), passing over the
    rows that cannot be about ``anchor``'s subject (``one_subject`` of the two rows' query
    words, the rows searched being ``later`` than the anchor or earlier) when ``asked``
    is given; None when no row is left. The words of a row are read only when it is the
    best one left."""
    if asked is None:
        return best(values, mask) if mask.any() else None
    rows = mask.nonzero()[0]
    found = values[rows]
    if np.isnan(found).any():  # argmax ranks NaN first, a sort last: keep argmax's order
        return nearest_stepwise(values, mask, anchor, asked, later)
    # the rows by value desc, first row first on a tie: the order best takes them in
    rows = rows[(-found).argsort(kind="stable")]
    mine = asked.row(anchor)
    for k in rows.tolist():
        if one_subject(*in_time(mine, asked.row(k), later)):
            return int(k)
    return None


def in_time(anchor: int, row: int, later: bool) -> tuple[int, int]:
    """(older, newer) of the anchor's and a searched row's words, the row being ``later``."""
    return (anchor, row) if later else (row, anchor)


def nearest_stepwise(
    values: np.ndarray,
    mask: np.ndarray,
    anchor: int,
    asked: AskedWords,
    later: bool = True,
) -> int | None:
    """``nearest`` one ``best`` at a time (the order argmax gives NaN values)."""
    mask = mask.copy()
    mine = asked.row(anchor)
    while mask.any():
        k = best(values, mask)
        if one_subject(*in_time(mine, asked.row(k), later)):
            return k
        mask[k] = False
    return None


def mutual_nearest_later(
    i: int,
    sims: np.ndarray,
    unit: np.ndarray,
    sessions: np.ndarray,
    whens: np.ndarray,
    floor: float,
    wanted: Container[int] | None = None,
    asked: AskedWords | None = None,
    kin: Container[int] = (),
) -> int | None:
    """``freshness._mutual_nearest_later`` as it ran until f97eae4 (see its docstring for what
    it decides), over ``whens`` (each candidate's (valid_from, t_created)) and ``sessions``
    (``session_codes``) as masks over every row."""
    if len(sessions) < 3:
        return None
    t_i = (int(whens[i, 0]), int(whens[i, 1]))
    conv = same_conversation(sessions, i, whens, asked)
    j = nearest(sims, later_mask(whens, t_i) & ~conv, i, asked)
    if j is None or sims[j] < floor or (wanted is not None and j not in wanted):
        return None
    back = (unit @ unit[j]).round(9)
    t_j = (int(whens[j, 0]), int(whens[j, 1]))
    # j's nearest earlier statement among those it could update: one said in j's own
    # session (or, without sessions, on j's day) is the same conversation, often the same
    # words twice (a round's verbatim record beside the fact read from it), not a rival
    conv = same_conversation(sessions, j, whens, asked)
    back_to = nearest(back, earlier_mask(whens, t_j) & ~conv, j, asked, later=False)
    return j if back_to is not None and (back_to == i or back_to in kin) else None
