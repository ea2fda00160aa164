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
Leeds", is not news about the sister (``one_subject``). Only the ``freshness_top_n`` most relevant
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

import re
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from attestor_arango.retrieval.candidates import Candidate, update_relevance
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.freshness_search import AskedWords, Rows, first_places, known_terms
from attestor_arango.retrieval.text_lane import terms
from attestor_arango.scope import Scope

FRESH_EPSILON = 0.001  # an update ranks just above the fact it updates


@runtime_checkable
class UnitVectors(Protocol):
    """A backend that hands stored vectors over as float64 unit vectors, each row divided
    once and kept (the embedded one, for a small index: ``exact.UnitRows``), the same floats
    ``unit_rows`` computes; None when it does not hold every one. Not part of the Store
    contract."""

    def vector_units(self, scope: Scope, ids: Sequence[str]) -> np.ndarray | None: ...


class StoredRows(Mapping[str, np.ndarray]):
    """Stored vectors by id as the rows of one float32 matrix (the lanes' union, as one
    recall's ``VectorCache`` kept it): ``unit_rows`` takes the rows it needs in one
    gather, where joining ~85 arrays, each split from that matrix first, cost ~300k
    instructions a run. ``place``: each id's row. ``wide``: when given, the matrix widened
    to float64 and each row's norm (``codec.row_norms``'s floats), as lane completion
    computed them, so ``unit_rows`` only divides. ``units``: the unit vectors of some of the
    ids as the backend keeps them (``UnitVectors``, or None), read before dividing."""

    def __init__(
        self,
        ids: Sequence[str],
        matrix: np.ndarray,
        wide: tuple[np.ndarray, np.ndarray] | None = None,
        units: Callable[[list[str]], np.ndarray | None] | None = None,
    ) -> None:
        self.place = dict(zip(ids, range(len(ids)), strict=True))
        self.matrix = matrix
        self.wide = wide
        self.units = units

    def __getitem__(self, key: str) -> np.ndarray:
        row: np.ndarray = self.matrix[self.place[key]]
        return row

    def __contains__(self, key: object) -> bool:
        return key in self.place

    def __iter__(self) -> Iterator[str]:
        return iter(self.place)

    def __len__(self) -> int:
        return len(self.place)


def unit_rows(cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """The candidates' vectors as unit-length float64 rows (zeros where a vector is missing)."""
    n = len(cands)
    if isinstance(vectors, StoredRows) and n:
        place = vectors.place
        try:  # gathered at once (the rows' places as one index array): the very float32 rows
            at = np.fromiter([place[c.id] for c in cands], np.intp, n)
        except KeyError:  # a candidate the matrix does not hold: row by row, below
            pass
        else:
            kept = None if vectors.units is None else vectors.units([c.id for c in cands])
            if kept is not None:  # each row divided once by the backend: the same floats
                return kept
            if vectors.wide is None:
                return _unit(vectors.matrix.take(at, axis=0).astype(np.float64))
            wide, norms = vectors.wide  # the same floats as widening and norming them here
            return _divided(wide.take(at, axis=0), norms.take(at))
    dim = next((len(v) for v in vectors.values()), 0)
    if n == 0 or not dim:
        return np.zeros((n, 1), dtype=np.float64)
    zero = np.zeros(dim, dtype=np.float32)
    rows = [vectors.get(c.id, zero) for c in cands]
    # joined flat, then widened: the same float64 values as np.array(rows, float64), ~1.4x
    # faster at the ~90 rows of a recall
    return _unit(np.concatenate(rows).reshape(n, dim).astype(np.float64))


def _unit(mat: np.ndarray) -> np.ndarray:
    """``mat``'s rows divided by their norms (a zero row stays zero), in place."""
    return _divided(mat, np.sqrt((mat * mat).sum(axis=1)))


def _divided(mat: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """``mat``'s rows divided by ``norms`` (a zero norm as 1.0), both in place."""
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


def _mutual_nearest_later(
    i: int,
    sims: np.ndarray,
    unit: np.ndarray,
    rows: Rows,
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
    nearest (``one_subject``), and two statements without sessions written the same day
    as they were said are not one conversation (``Rows.same_conversation``). ``kin``
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

    Each candidate's relevance must be current on the way in (the decay step before this
    one sums every candidate's, pipeline.py): only the candidates this step changes are
    computed again.

    Only the ``freshness_update_rank`` most relevant candidates can be an update, so only
    their words are read (whether they announce a change: ``known_terms``, the backend's
    terms when coverage attached them, else the memoised tokeniser's, the same terms) and
    only they are tested as one.

    ``asked``: the query's scoring terms. With them, a later statement whose query words say
    another subject (``one_subject``) is not found nearest, and two statements without
    sessions written within a day of each other as they were said (``valid_from`` =
    ``t_created``) can be an update and the fact it updates (``Rows.same_conversation``;
    only the words of the rows a search reaches are read); without them (None) such
    statements are one conversation, never an update of each other, and words decide
    nothing.

    The cosines are numpy's (the unit rows times one row, rounded to 9 places); the
    searches and tests over them run in Python floats, the same comparisons on the same
    values (``tests/test_freshness_few.py`` compares the step with the numpy masks it
    replaced, bit for bit).
    """
    exempt = set(config.freshness_exempt_tags)
    held = vectors.place if isinstance(vectors, StoredRows) else vectors  # ``in``, from C
    items = [  # most memories carry no tag: none to test against the exempt ones
        c
        for c in cands
        if not c.synthetic
        and c.id in held
        and (not (t := c.fields["tags"]) or exempt.isdisjoint(t))
    ]
    if len(items) < 2:
        return
    before = [c.relevance for c in items]
    # tie_key of each candidate's relevance (stored rounded to 12 places: candidates.ROUNDED),
    # and only the first places: the top_n that may yield, the update_rank that may update
    top = first_places(items, before, max(config.freshness_top_n, config.freshness_update_rank))
    able = top[: config.freshness_update_rank]  # the candidates that may be an update
    words = None if asked is None else AskedWords(items, asked)
    rows = Rows(items, words)
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
    cued = {k: not cues.isdisjoint(known_terms(items[k])) for k in able}
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
    # only these changed: the decay step before left the others' relevance current
    update_relevance([items[k] for k in sorted(changed)])
