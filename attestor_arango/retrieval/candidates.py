"""The candidate record every pipeline step reads and annotates.

A candidate is internal and mutable while the pipeline runs; the response turns
it into a frozen ``ScoreBreakdown``. Keeping every signal on one record is what
makes a ranking explainable: nothing is folded away before the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from attestor_arango.clock import OPEN
from attestor_arango.models import (
    Memory,
    RecallResult,
    ScoreBreakdown,
    known_us,
    trusted_fieldwise,
    us_of,
)
from attestor_arango.retrieval.rounding import round12, round_list
from attestor_arango.text.stemming import scoring_terms


@dataclass(slots=True)
class Candidate:
    memory: Memory  # set at creation: ``id``, the times and ``fields`` are read from it then
    lane_ranks: dict[str, int] = field(default_factory=dict)  # written by fusion only
    # the two lane scores a breakdown reports, as the lanes gave them (``results`` converts
    # them): slots, not a dict of every lane's, so a candidate is one container fewer
    vector_score: float | None = None
    bm25_score: float | None = None
    rrf: float = 0.0  # raw sum of 1 / (k + rank) over the lanes
    rrf_norm: float = 0.0  # rrf divided by its best possible value (or rrf itself)
    graph_hops: int | None = None
    graph_bonus: float = 0.0
    decay: float = 1.0
    boost: float = 0.0
    freshness: float = 0.0  # <= 0: an older statement of a newer candidate's topic
    session: float = 0.0  # neighbouring turns: support, less a turn's asking (neighbours.py)
    coverage: float = 0.0  # share of the query's terms the candidate and its session contain
    time_cue: float = 0.0  # the query asks when and the candidate says when (timecue.py)
    relevance: float = 0.0  # every signal summed: the ranking order (and the final score)
    synthetic: bool = False
    terms: tuple[str, ...] | None = None  # scoring terms of the content, once known
    # (rrf, rrf_norm, round(rrf, 12), round(rrf_norm + 0.0, 12)) as fusion computed them:
    # the breakdown uses the rounded pair while rrf and rrf_norm are still the first two,
    # those very objects. Fusion's own table entry, shared by every candidate of that rrf:
    # no object a candidate. The default (no rrf is None): not fused, ``results`` rounds them
    fused: tuple[float | None, float | None, float, float] = (None, None, 0.0, 0.0)
    # ``lane_ranks`` itself when fusion knows it is in lane-name order (it fused one or two
    # lanes, in name order), as the breakdown lists it: ``results`` then takes it as it is
    # (a dict replaced since is not this one). None: ``results`` puts it in order
    named_ranks: dict[str, int] | None = None

    # read from the memory once, at creation: the tie rule and decay read them for every
    # candidate, several times (``Memory.us`` converts a datetime)
    id: str = field(init=False)
    t_created: int = field(init=False)  # microseconds
    valid_from: int = field(init=False)  # the memory's event time in microseconds
    # the memory's field values (the frozen model's own ``__dict__``, never changed): the
    # steps that read a field of every candidate read it here by key, a dict lookup, where
    # ``memory.x`` goes through pydantic's attribute hook (~400 instructions a read)
    fields: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        memory = self.memory
        self.fields = memory.__dict__
        self.id = memory.id
        # both required: never an open bound; ``us_of`` without its Python call when the
        # datetime was converted before (rows recur from recall to recall)
        created, valid_from = memory.t_created, memory.valid_from
        us = known_us(created)
        self.t_created = us_of(created) if us is None else us
        us = known_us(valid_from)
        self.valid_from = us_of(valid_from) if us is None else us

    def content_terms(self) -> tuple[str, ...]:
        """The content's scoring terms: the backend's (``stored_terms``), else tokenised once."""
        if self.terms is None:
            self.terms = scoring_terms(self.memory.content)
        return self.terms

    def base(self) -> float:
        """Lane relevance plus graph affinity: what decay scales."""
        return self.rrf_norm + self.graph_bonus

    def compute_relevance(self) -> float:
        """Every signal summed (``base()`` inline: the same sum, one call fewer), rounded to
        12 places (``round12``: ``round(x, 12)`` bit for bit, a float)."""
        self.relevance = round12(
            (self.rrf_norm + self.graph_bonus) * self.decay
            + self.boost
            + self.freshness
            + self.session
            + self.coverage
            + self.time_cue
        )
        return self.relevance

    def breakdown(self) -> ScoreBreakdown:
        """The frozen breakdown of the response: ``results``' for this one candidate."""
        return results([self], (0,), OPEN)[0].breakdown

    def result(self, tokens: int, as_of: int) -> RecallResult:
        """The response's result for this candidate (``results`` of this one)."""
        return results([self], (tokens,), as_of)[0]


def results(kept: list[Any], counts: Sequence[int], as_of: int) -> list[RecallResult]:
    """The response's result of each candidate of ``kept`` with its ``counts`` tokens, and
    ``kept`` emptied as it goes: each candidate is dropped from it (None in its place) once
    its result is built, so a candidate no one else holds is freed then (pipeline.py:
    garbage collection). The result is the memory as a reader at
    ``as_of`` saw it, the relevance as score, the tokens and the frozen breakdown; both
    models built without re-validation (the memory is a validated model, the rest plain
    numbers converted here to the types validation gives: floats as floats), in one loop
    without a Python call per model (``models.trusted_fieldwise``: a recall builds ~90 of
    each, and the four calls a result were ~10% of building it).

    ``round(x, 12)`` costs ~1 us (a correctly rounded decimal conversion) and a response
    holds ~90 breakdowns, so it is not paid twice: decay, boost, session, coverage, time
    cue and relevance are stored already rounded to 12 places by the step that sets them
    (see ``ROUNDED``), and rounding a rounded value gives it back
    (``tests/test_recall_fast_paths.py``), as floats, so they are taken as they are; the final
    score is the relevance (no copy of it a candidate); rrf and rrf_norm come rounded from
    fusion while they are unchanged (``fused``). Fields the steps may set from the
    configuration (graph bonus, freshness) are converted as validation would (an int becomes
    a float).
    """
    breakdown_blank, breakdown_cls, breakdown_fields = _BREAKDOWN, ScoreBreakdown, _BREAKDOWN_FIELDS
    result_blank, result_cls, result_fields, zero = _RESULT, RecallResult, _RESULT_FIELDS, ZERO
    if len(counts) != len(kept):
        raise ValueError(f"{len(kept)} candidates with {len(counts)} token counts")
    out: list[RecallResult] = []
    for i in range(len(kept)):  # indexed: no generator nor pair a result (~300 instructions)
        c: Candidate = kept[i]
        kept[i] = None
        ranks, vector_score, bm25_score = c.lane_ranks, c.vector_score, c.bm25_score
        fused = c.fused
        if fused[0] is c.rrf and fused[1] is c.rrf_norm:
            rrf, rrf_norm = fused[2], fused[3]
        else:
            rrf, rrf_norm = float(round(c.rrf, 12)), float(round(c.rrf_norm, 12))
        # the lanes by name: fusion's own dict when it is in that order already (one lane,
        # or two fused in name order: fusion.py); the candidate is not changed after this
        if c.named_ranks is ranks:
            lanes = ranks
        elif len(ranks) == 2:
            first, second = ranks
            lanes = ranks if first < second else {second: ranks[second], first: ranks[first]}
        else:
            lanes = ranks if len(ranks) < 2 else dict(sorted(ranks.items()))
        # every field, in ScoreBreakdown's order (``models.trusted_fieldwise``); the fields a
        # recall mostly leaves at their defaults (graph bonus, freshness: ~97-100% of
        # LoCoMo's results) are converted only when the candidate holds another object than
        # that very default: an identity test, so a -0.0 or an int 0 a step stored is
        # converted as validation would
        b: Any = breakdown_blank()
        b.vector_rank = ranks.get("vector")
        b.vector_score = None if vector_score is None else float(vector_score)
        b.bm25_rank = ranks.get("bm25")
        b.bm25_score = None if bm25_score is None else float(bm25_score)
        b.lanes = lanes
        b.rrf = rrf
        b.rrf_norm = rrf_norm
        b.graph_hops = c.graph_hops
        bonus = c.graph_bonus
        b.graph_bonus = bonus if bonus is zero else float(bonus)
        b.decay = c.decay  # the ROUNDED fields: floats already, as they are
        b.boost = c.boost
        fresh = c.freshness
        if fresh is not zero:
            fresh = float(fresh)  # round12, inline
            if not fresh.is_integer():
                fresh = round(fresh, 12)
        b.freshness = fresh
        b.session = c.session
        b.coverage = c.coverage
        b.time_cue = c.time_cue
        b.relevance = relevance = c.relevance
        b.synthetic = c.synthetic  # a bool (graph.py, fusion.py)
        b.final = relevance  # the final score is the relevance
        b.__pydantic_fields_set__ = breakdown_fields
        b.__pydantic_extra__ = None
        b.__pydantic_private__ = None
        b.__class__ = breakdown_cls
        memory = c.memory
        if c.fields["t_expired"] is not None:  # ``at`` masks a close after as_of
            memory = memory.at(as_of)
        r: Any = result_blank()
        r.memory = memory
        r.score = relevance  # the relevance as score: rounded to 12 places already
        r.tokens = int(counts[i])
        r.breakdown = b
        r.__pydantic_fields_set__ = result_fields
        r.__pydantic_extra__ = None
        r.__pydantic_private__ = None
        r.__class__ = result_cls
        out.append(r)
    return out


# the blank models each is made as, field by field (``models.trusted_fieldwise``), and
# their field sets
_BREAKDOWN, _BREAKDOWN_FIELDS = trusted_fieldwise(ScoreBreakdown)
_RESULT, _RESULT_FIELDS = trusted_fieldwise(RecallResult)
# the 0.0 of this module: one float object, as Python makes one constant of every equal
# literal a module holds, so it is every 0.0 default of ``Candidate``; fusion gives its
# candidates this very object (``results`` converts graph bonus and freshness only when
# they are another object)
ZERO = 0.0


def update_relevance(cands: Sequence[Candidate]) -> None:
    """``compute_relevance`` of every candidate. For many (decay's, every candidate of a
    recall), the sums are added in Python floats, ``compute_relevance``'s very expression
    in a comprehension, and rounded over the array (``round_list``, equal to ``round12``
    bit for bit; ``tests/test_relevance_arrays.py`` compares both forms) instead of two
    Python calls a candidate (~1/7 of the decay step); for a few (freshness's changed
    ones), one call each is cheaper than the array's fixed cost."""
    if len(cands) < _ARRAY_FROM:
        for c in cands:
            c.compute_relevance()
        return
    sums = [
        (c.rrf_norm + c.graph_bonus) * c.decay
        + c.boost
        + c.freshness
        + c.session
        + c.coverage
        + c.time_cue
        for c in cands
    ]
    for c, relevance in zip(cands, round_list(sums, 12), strict=True):
        c.relevance = relevance


_ARRAY_FROM = 8  # candidates: from here on the array form costs less than the calls


# Fields every step stores as a float rounded to 12 places (``round(value, 12)``, ``round12``,
# or leaves at its float default), so ``breakdown`` and ``order`` need not round them again
# and ``results`` takes them as they are: no ``float()`` a field, ~1,300 instructions a
# result (``tests/test_recall_fast_paths.py`` checks the steps store floats).
ROUNDED = ("decay", "boost", "session", "coverage", "time_cue", "relevance")


def tie_key(score: float, c: Candidate) -> tuple[float, int, str]:
    """The one tie rule: score desc, t_created desc, id asc."""
    return (-round(score, 12), -c.t_created, c.id)


def order(cands: list[Candidate], attr: str = "relevance") -> list[Candidate]:
    """Candidates by ``tie_key`` of ``attr``; an attribute in ``ROUNDED`` is not rounded
    again (the same key: rounding a value rounded to 12 places gives it back)."""
    if attr == "relevance":  # the common case (a float: see ROUNDED)
        return _by_relevance(cands)
    if attr in ROUNDED:
        return sorted(cands, key=lambda c: (-float(getattr(c, attr)), -c.t_created, c.id))
    return sorted(cands, key=lambda c: tie_key(float(getattr(c, attr)), c))


def _tie_rule(c: Candidate) -> tuple[float, int, str]:
    """``tie_key`` of the relevance, which is stored rounded (``ROUNDED``)."""
    return (-c.relevance, -c.t_created, c.id)


_RELEVANCE = attrgetter("relevance")
_NAN = float("nan")  # equal to no value


def _by_relevance(cands: list[Candidate]) -> list[Candidate]:
    """``sorted(cands, key=_tie_rule)``, with the relevances compared as plain floats: sorted
    by relevance alone, highest first (C compares the floats: no key tuple, no Python call a
    candidate; ~1/3 of the tuple keys' cost, and a recall orders its ~85 candidates two or
    three times), then one pass that finds no two equal relevances, nor a NaN. Equal ones
    are rare (~0.3% of LoCoMo's candidates, in ~1/5 of the orderings): then
    ``_by_tie_rule``. ``tests/test_recall_fast_paths.py`` compares both on lists of ties."""
    ranked = sorted(cands, key=_RELEVANCE, reverse=True)
    last = _NAN
    for c in ranked:
        key = c.relevance
        if key == last or key != key:  # equal to the one before (0.0 and -0.0 too), or NaN
            return _by_tie_rule(cands, ranked)
        last = key
    return ranked


def _by_tie_rule(cands: list[Candidate], ranked: list[Candidate]) -> list[Candidate]:
    """``ranked`` (``cands`` by relevance alone, equal ones in their given order) with each
    run of equal relevances sorted by the whole tie rule; with a NaN among them, which has
    no place in a float order, ``cands`` sorted by the tuple keys, as before."""
    keys = [c.relevance for c in ranked]
    if any(key != key for key in keys):
        return sorted(cands, key=_tie_rule)
    start = 0
    for end in range(1, len(keys) + 1):
        if end == len(keys) or keys[end] != keys[start]:
            if end - start > 1:
                ranked[start:end] = sorted(ranked[start:end], key=_tie_rule)
            start = end
    return ranked
