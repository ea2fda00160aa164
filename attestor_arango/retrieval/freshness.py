"""Freshness: the newer statement of a subject takes the rank of the one it replaces.

Like decay, it reads "now" and the statements' times from the view and the rows,
never the wall clock. A candidate that an event-later candidate restates (cosine at or
above ``freshness_similarity``, same entity, another session) loses
``freshness_penalty`` and the newer one is lifted to just above the older one's
relevance: the update takes over the rank of the fact it updates (of a chain of updates,
the newest takes the chain's top rank and every earlier one yields). A near twin that
drops a word of the query the older one holds is about another subject ("Melanie: I'm
a fan of Bach" said again later as "Jordan: I'm a fan of Bach", asked about Melanie),
not an update, unless it announces a change. A newer statement that announces a change
("moved to", "switched", "instead", "no longer") needs only
``freshness_cue_similarity``. Within one session, similar statements are a
conversation going on, not an update. A statement found nearest to another only by
cosine must keep the query's words the older one holds, or hold none of them (a
paraphrase): "My brother lives in Glasgow", said a month after "My sister lives in
Leeds", is not news about the sister (``_one_subject``). Only the ``freshness_top_n`` most relevant
candidates can yield, each to one newer candidate that is itself among the
``freshness_update_rank`` most relevant: freshness decides between answers, it does not
promote a restatement from deep in the list (in a chat stored turn by turn, some later
turn is always "near" a good answer, and lifting it to rank 1 loses the answer).
Freshness answers "what holds now"; a question in the past tense ("What did Mel
paint?", "Where was the party?", "Which car did I use to drive?"), or in the perfect
("What books has Mel read?"), asks about events or an earlier state, which a later
statement does not replace, so such a query skips freshness (``asks_past``).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Container, Mapping, Sequence

import numpy as np

from attestor_arango.retrieval.candidates import Candidate, update_relevance
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.temporal import US_PER_DAY
from attestor_arango.retrieval.text_lane import terms

FRESH_EPSILON = 0.001  # an update ranks just above the fact it updates


def unit_rows(cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """The candidates' vectors as unit-length float64 rows (zeros where a vector is missing)."""
    n = len(cands)
    dim = next((len(v) for v in vectors.values()), 0)
    if n == 0 or not dim:
        return np.zeros((n, 1), dtype=np.float64)
    zero = np.zeros(dim, dtype=np.float32)
    rows = [vectors.get(c.id, zero) for c in cands]
    # joined flat, then widened: the same float64 values as np.array(rows, float64), ~1.4x
    # faster at the ~90 rows of a recall
    mat = np.concatenate(rows).reshape(n, dim).astype(np.float64)
    norms = np.sqrt((mat * mat).sum(axis=1))
    norms[norms == 0] = 1.0
    mat /= norms[:, np.newaxis]
    return mat


# English words that announce a changed fact, as stems (see text.terms)
CHANGE_CUES = frozenset(
    terms(
        "now new newly switched moved changed instead anymore longer replaced updated became "
        "become quit stopped sold cancelled canceled renewed relocated transferred upgraded "
        "downgraded dropped decided extended rescheduled postponed reduced increased lately "
        "currently nowadays"
    )
)


def announces_change(text_terms: tuple[str, ...]) -> bool:
    """Whether a statement, given its scoring terms, says that something changed
    ("I moved to Berlin")."""
    return not CHANGE_CUES.isdisjoint(text_terms)


# the past-tense auxiliaries and the words that ask for an earlier state, in English
_ASKS_PAST = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|used to|ago|originally|previously|"
    r"formerly|at first)\b"
)
# a word each form of _ASKS_PAST holds: without one of them, it cannot match
_PAST_WORDS = (
    "did", "was", "were", "had", "used to", "ago", "originally", "previously", "formerly",
    "at first",
)  # fmt: skip


# the perfect asks which events happened up to now ("What books has Melanie read?", "Which
# cities has Jon visited?"): every one counts, the latest does not replace the others.
# A participle is a regular -ed form or one of these irregular ones; "had", "got" and
# "been" are left out ("What car have I got?" asks what holds now), and so is a
# participle that announces a change ("Where have I moved to?" asks for the latest).
_PERFECT = re.compile(
    r"\b(?:has|have|hasn't|haven't)\s+(?:[\w'-]+\s+){0,3}?"
    r"(\w+ed|done|gone|made|seen|taken|lost|won|read|written|bought|met|given|found|"
    r"brought|built|spent|eaten|ridden|driven|flown|worn|sung|drawn|taught|heard)\b"
)


def asks_past(query: str) -> bool:
    """Whether a query asks about the past (an event, an earlier state, the events up to
    now), not what holds now."""
    text = query.lower().replace("\u2019", "'")
    # each search only when the text holds a word it looks for (a search that cannot match
    # scans every place of the question)
    if any(map(text.__contains__, _PAST_WORDS)) and _ASKS_PAST.search(text) is not None:
        return True
    if "has" not in text and "hav" not in text:  # every form of _PERFECT holds one
        return False
    return any(CHANGE_CUES.isdisjoint(terms(m.group(1))) for m in _PERFECT.finditer(text))


def _when(c: Candidate) -> tuple[int, int]:
    return (c.valid_from, c.t_created)


def _first_places(items: Sequence[Candidate], before: Sequence[float], places: int) -> list[int]:
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
            for t in bit.keys() & self._items[k].content_terms():  # the terms as they are
                v |= bit[t]
            self._bits[k] = v
        return v


def _one_subject(older: int, newer: int) -> bool:
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


def _desc(values: np.ndarray) -> list[int]:
    """The rows by value, highest first, the first row first on a tie, and every NaN before
    them in row order: the order in which ``np.argmax`` over the rows left takes them (it
    ranks a NaN highest, where a sort puts it last). numpy's stable argsort: ~25k
    instructions at ~85 rows, where Python's sort with a key was ~45k."""
    rows: list[int] = (-values).argsort(kind="stable").tolist()
    if rows and (last := float(values[rows[-1]])) != last:  # a NaN: they are sorted last
        nan: list[int] = np.flatnonzero(values != values).tolist()
        rows = nan + rows[: len(rows) - len(nan)]
    return rows


class _Rows:
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
        words, as for any other pair (``_one_subject``, read only for the rows a search
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
        subject (``_one_subject``); None when no row is. The words of a row are read only
        when it is the best one left."""
        vf, tc, words = self.vf, self.tc, self.words
        t0, t1 = vf[anchor], tc[anchor]
        mine = -1 if words is None else words.row(anchor)
        for k in _desc(values):
            v = vf[k]
            if later:  # (valid_from, t_created) after the anchor's, as tuples compare
                if v < t0 or (v == t0 and tc[k] <= t1):
                    continue
            elif v > t0 or (v == t0 and tc[k] >= t1):
                continue
            if self.same_conversation(anchor, k):
                continue
            if words is not None:
                theirs = words.row(k)
                if not (_one_subject(mine, theirs) if later else _one_subject(theirs, mine)):
                    continue
            return k
        return None


def _mutual_nearest_later(
    i: int,
    sims: np.ndarray,
    unit: np.ndarray,
    rows: _Rows,
    floor: float,
    wanted: Container[int] | None = None,
    kin: Container[int] = (),
) -> int | None:
    """The later candidate that is ``i``'s nearest, when ``i`` (or one of ``kin``, the rows
    already found to state ``i``'s subject) is also its nearest earlier one.

    Two statements that are each other's closest match among the candidates, said
    at different times, are about the same subject even when no word is shared
    ("My car is a Nissan Leaf" ... "These days I get around in a Hyundai Ioniq"):
    the later one is an update. Scale-free (ranks of cosines, not a threshold of
    one embedder), with ``floor`` as the least similarity that counts. Said in the
    same session, or (without sessions) on the same day, they are one conversation
    going on, not an update; so both searches look only at the other conversations'
    statements (a statement's twin in its own session, such as an ingest round's
    verbatim record beside the fact read from it, must not hide the update). Among two
    candidates "nearest" says nothing: at least three are needed. ``sims`` holds each
    candidate's cosine to ``i`` (rounded to 9 places), ``unit`` the unit rows. With
    ``wanted``, a nearest later candidate outside it is not tested further (None): a
    caller that can use only those answers saves the search back. With the query's words
    (``rows.words``), a statement whose query words say another subject is never a
    nearest (``_one_subject``), and two statements without sessions written the same day
    as they were said are not one conversation (``_Rows.same_conversation``). ``kin``
    carries a chain: "My phone case is red", "... green", "... black" written in turn, the
    black one may be nearest to the red one, which the green one already updated; it then
    updates the green one too.
    """
    if len(sims) < 3:
        return None
    j = rows.nearest(sims, i)
    if j is None or sims[j] < floor or (wanted is not None and j not in wanted):
        return None
    # j's nearest earlier statement among those it could update: one said in j's own
    # session (or, without sessions, on j's day) is the same conversation, often the same
    # words twice (a round's verbatim record beside the fact read from it), not a rival
    nearest = rows.nearest((unit @ unit[j]).round(9), j, later=False)
    return j if nearest is not None and (nearest == i or nearest in kin) else None


def apply_freshness(
    cands: Sequence[Candidate],
    vectors: Mapping[str, np.ndarray],
    config: RetrievalConfig,
    asked: Sequence[str] | None = None,
) -> None:
    """Demotes candidates restated later by a similar candidate about the same entity.

    Each candidate's relevance must be current on the way in (every step before this one
    calls ``compute_relevance`` on what it changes): only the candidates this step changes
    are computed again.

    Only the ``freshness_update_rank`` most relevant candidates can be an update, so only
    their words are read (whether they announce a change: ``content_terms``, the backend's
    terms when coverage attached them, else the memoised tokeniser's, the same terms) and
    only they are tested as one.

    ``asked``: the query's scoring terms. With them, a later statement whose query words say
    another subject (``_one_subject``) is not found nearest, and two statements without
    sessions written within a day of each other as they were said (``valid_from`` =
    ``t_created``) can be an update and the fact it updates (``_Rows.same_conversation``;
    only the words of the rows a search reaches are read); without them (None) such
    statements are one conversation, never an update of each other, and words decide
    nothing.

    The cosines are numpy's (the unit rows times one row, rounded to 9 places); the
    searches and tests over them run in Python floats, the same comparisons on the same
    values (``tests/test_freshness_few.py`` compares the step with the numpy masks it
    replaced, bit for bit).
    """
    exempt = set(config.freshness_exempt_tags)
    items = [
        c
        for c in cands
        if not c.synthetic and c.id in vectors and exempt.isdisjoint(c.fields["tags"])
    ]
    if len(items) < 2:
        return
    before = [c.relevance for c in items]
    # tie_key of each candidate's relevance (stored rounded to 12 places: candidates.ROUNDED),
    # and only the first places: the top_n that may yield, the update_rank that may update
    top = _first_places(items, before, max(config.freshness_top_n, config.freshness_update_rank))
    able = top[: config.freshness_update_rank]  # the candidates that may be an update
    words = None if asked is None else AskedWords(items, asked)
    rows = _Rows(items, words)
    # what may update each candidate that may yield: the inner tests of an update that read
    # no vector (same entity, not its own conversation's session, said later), among the
    # update_rank most relevant; a candidate with none yields to nothing, and without any
    # such pair no vector is read and nothing changes
    pairs: list[tuple[int, list[int]]] = []
    for i in top[: config.freshness_top_n]:
        older = items[i]
        t_old = _when(older)
        entity, s_old = older.fields["entity"], rows.session(i)
        newer_ones = [
            j
            for j in able
            if items[j].fields["entity"] == entity
            and (s_old is None or s_old != rows.session(j))
            and _when(items[j]) > t_old
        ]
        if newer_ones:
            pairs.append((i, newer_ones))
    if not pairs:
        return
    cues = CHANGE_CUES  # announces_change of each, inline
    cued = {k: not cues.isdisjoint(items[k].content_terms()) for k in able}
    unit = unit_rows(items, vectors)
    changed: set[int] = set()
    twin, cue_floor = config.freshness_similarity, config.freshness_cue_similarity
    # the rows found to state one subject, each row's chain a set shared by its members
    kin: dict[int, set[int]] = {}
    stale: set[int] = set()  # rows a later one updates
    tops: dict[int, float] = {}  # an update's highest relevance in its chain before it
    # oldest first, so that a chain's links are known when its later rows are tested
    for i, newer_ones in sorted(pairs, key=lambda p: (_when(items[p[0]]), items[p[0]].id)):
        cosines = (unit @ unit[i]).round(9)
        mate = _mutual_nearest_later(i, cosines, unit, rows, cue_floor, newer_ones, kin.get(i, ()))
        sims: list[float] = cosines.tolist()
        # j may restate i: the mutual nearest, or close enough (a change-announcing j needs
        # less similarity)
        updates = [
            j
            for j in newer_ones
            if j == mate or sims[j] >= twin or (sims[j] >= cue_floor and cued[j])
        ]
        if words is not None:  # a near twin must keep the asked-about subject
            updates = [j for j in updates if cued[j] or sims[j] < twin or words.holds_all(i, j)]
        if not updates:
            continue
        # the most relevant update takes over the rank of the fact it updates, and of every
        # statement of the chain before it
        best = min(updates, key=lambda k: (-before[k], -items[k].t_created, items[k].id))
        chain = kin.get(i, {i}) | kin.get(best, {best})
        for k in chain:
            kin[k] = chain
        t_best = _when(items[best])
        peak = max(before[k] for k in chain if _when(items[k]) < t_best)
        tops[best] = max(tops.get(best, peak), peak)
        stale.add(i)
        changed.update((i, best))
    # a row updated in turn yields, whichever lifts it had: only a chain's newest is lifted
    for k in stale:
        items[k].freshness = -config.freshness_penalty
    for k, peak in tops.items():
        if k not in stale:
            lift = round(max(0.0, peak - before[k]) + FRESH_EPSILON, 12)
            items[k].freshness = max(items[k].freshness, lift)
    # only these changed: every step before keeps the others' relevance current
    update_relevance([items[k] for k in sorted(changed)])
