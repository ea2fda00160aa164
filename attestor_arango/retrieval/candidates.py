"""The candidate record every pipeline step reads and annotates.

A candidate is internal and mutable while the pipeline runs; the response turns
it into a frozen ``ScoreBreakdown``. Keeping every signal on one record is what
makes a ranking explainable: nothing is folded away before the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from attestor_arango.models import (
    Memory,
    RecallResult,
    ScoreBreakdown,
    known_us,
    trusted_maker,
    us_of,
)
from attestor_arango.retrieval.rounding import round12
from attestor_arango.text.stemming import scoring_terms


@dataclass(slots=True)
class Candidate:
    memory: Memory  # set at creation: ``id``, the times and ``fields`` are read from it then
    lane_ranks: dict[str, int] = field(default_factory=dict)
    lane_scores: dict[str, float] = field(default_factory=dict)
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
    relevance: float = 0.0  # every signal summed: the ranking order
    final: float = 0.0
    synthetic: bool = False
    terms: tuple[str, ...] | None = None  # scoring terms of the content, once known
    # rrf and rrf_norm as fusion computed them, with their round(x, 12): the breakdown
    # uses the rounded pair while rrf and rrf_norm are still those very objects (four
    # slots, not a tuple: one object fewer per candidate for the collector to count)
    fused_rrf: float | None = None
    fused_rrf_12: float = 0.0
    fused_norm: float | None = None
    fused_norm_12: float = 0.0

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
        """The frozen breakdown of the response, built without re-validation: every
        field is converted here to the type validation would give it (floats as floats).

        ``round(x, 12)`` costs ~1 us (a correctly rounded decimal conversion) and a
        response holds ~90 breakdowns, so it is not paid twice: decay, boost, session,
        coverage, time cue and relevance are stored already rounded to 12 places by the
        step that sets them (see ``ROUNDED``), and rounding a rounded value gives it back
        (``tests/test_recall_fast_paths.py``); ``final`` is the relevance; rrf and
        rrf_norm come rounded from fusion while they are unchanged (``fused_rrf``...).
        """
        ranks, scores = self.lane_ranks, self.lane_scores
        vector_score, bm25_score = scores.get("vector"), scores.get("bm25")
        fresh = float(self.freshness)  # round12, inline: usually 0.0
        if self.fused_rrf is self.rrf and self.fused_norm is self.rrf_norm:
            rrf, rrf_norm = self.fused_rrf_12, self.fused_norm_12
        else:
            rrf, rrf_norm = float(round(self.rrf, 12)), float(round(self.rrf_norm, 12))
        # the lanes by name: fusion's own dict when it is in that order already (one lane,
        # or two fused in name order: fusion.py); the candidate is not changed after this
        if len(ranks) == 2:
            first, second = ranks
            lanes = ranks if first < second else {second: ranks[second], first: ranks[first]}
        else:
            lanes = ranks if len(ranks) < 2 else dict(sorted(ranks.items()))
        # every field set in a copy of the fields in their order (a copy clones the keys:
        # ~1,100 instructions a breakdown less than the 18-key literal building them anew)
        values = _FIELDS.copy()
        values["vector_rank"] = ranks.get("vector")
        values["vector_score"] = None if vector_score is None else float(vector_score)
        values["bm25_rank"] = ranks.get("bm25")
        values["bm25_score"] = None if bm25_score is None else float(bm25_score)
        values["lanes"] = lanes
        values["rrf"] = rrf
        values["rrf_norm"] = rrf_norm
        values["graph_hops"] = self.graph_hops
        values["graph_bonus"] = float(self.graph_bonus)
        values["decay"] = float(self.decay)
        values["boost"] = float(self.boost)
        values["freshness"] = fresh if fresh.is_integer() else round(fresh, 12)
        values["session"] = float(self.session)
        values["coverage"] = float(self.coverage)
        values["time_cue"] = float(self.time_cue)
        values["relevance"] = float(self.relevance)
        values["synthetic"] = bool(self.synthetic)
        values["final"] = float(self.final)
        return _breakdown(values)

    def result(self, tokens: int, as_of: int) -> RecallResult:
        """The response's result for this candidate: the memory as a reader at ``as_of``
        saw it, the relevance as score, ``tokens`` and the breakdown; built without
        re-validation (the memory is a validated model, the rest plain numbers of the
        field types: ``RecallResult(...)`` would only check them)."""
        memory = self.memory
        if self.fields["t_expired"] is not None:  # ``at`` masks a close after as_of
            memory = memory.at(as_of)
        return _result(
            {
                "memory": memory,
                "score": float(self.final),  # the relevance: rounded to 12 places already
                "tokens": int(tokens),
                "breakdown": self.breakdown(),
            }
        )


_new = object.__new__  # Candidate defines no __new__


def fused_candidate(
    memory: Memory,
    lane: str,
    rank: int,
    score: float,
    rrf: float,
    fields: dict[str, Any] | None = None,
) -> Candidate:
    """``Candidate(memory, {lane: rank}, {lane: score}, rrf)``, field for field, without the
    dataclass ``__init__``: fusion makes one per memory its lanes name (~85 a recall), and
    the class call, the keyword defaults and the ``__post_init__`` call were ~70% of the
    ~1.4 us each took. Every slot is set here: a field added to ``Candidate`` without a
    line below fails ``tests/test_recall_fast_paths.py`` (the two are compared slot by
    slot). The memory's times are read through its ``__dict__`` (one attribute lookup, not
    three through pydantic's ``__getattr__`` hook), or given as ``fields`` by a caller that
    read it already."""
    c = _new(Candidate)
    c.memory = memory
    c.lane_ranks = {lane: rank}
    c.lane_scores = {lane: score}
    c.rrf = rrf
    c.rrf_norm = 0.0
    c.graph_hops = None
    c.graph_bonus = 0.0
    c.decay = 1.0
    c.boost = 0.0
    c.freshness = 0.0
    c.session = 0.0
    c.coverage = 0.0
    c.time_cue = 0.0
    c.relevance = 0.0
    c.final = 0.0
    c.synthetic = False
    c.terms = None
    c.fused_rrf = None
    c.fused_rrf_12 = 0.0
    c.fused_norm = None
    c.fused_norm_12 = 0.0
    values = memory.__dict__ if fields is None else fields
    c.fields = values
    c.id = values["id"]
    created, valid_from = values["t_created"], values["valid_from"]
    us = known_us(created)  # as __post_init__ reads them
    c.t_created = us_of(created) if us is None else us
    us = known_us(valid_from)
    c.valid_from = us_of(valid_from) if us is None else us
    return c


_breakdown = trusted_maker(ScoreBreakdown)
# ScoreBreakdown's fields in their order: ``breakdown`` copies it and sets every one
_FIELDS: dict[str, object] = dict.fromkeys(ScoreBreakdown.model_fields)
_result = trusted_maker(RecallResult)


def update_relevance(cands: Sequence[Candidate]) -> None:
    """``compute_relevance`` of every candidate (one place to call it for many: an array
    form was slower than this loop at the ~100 candidates of a recall)."""
    for c in cands:
        c.compute_relevance()


# Fields every step stores as ``round(value, 12)`` (or leaves at an integral default),
# so ``breakdown`` and ``order`` need not round them again.
ROUNDED = ("decay", "boost", "session", "coverage", "time_cue", "relevance", "final")


def tie_key(score: float, c: Candidate) -> tuple[float, int, str]:
    """The one tie rule: score desc, t_created desc, id asc."""
    return (-round(score, 12), -c.t_created, c.id)


def order(cands: list[Candidate], attr: str = "relevance") -> list[Candidate]:
    """Candidates by ``tie_key`` of ``attr``; an attribute in ``ROUNDED`` is not rounded
    again (the same key: rounding a value rounded to 12 places gives it back)."""
    if attr == "relevance":  # the common case, without getattr (a float: see ROUNDED)
        return sorted(cands, key=lambda c: (-c.relevance, -c.t_created, c.id))
    if attr in ROUNDED:
        return sorted(cands, key=lambda c: (-float(getattr(c, attr)), -c.t_created, c.id))
    return sorted(cands, key=lambda c: tie_key(float(getattr(c, attr)), c))
