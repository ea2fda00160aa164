"""The candidate record every pipeline step reads and annotates.

A candidate is internal and mutable while the pipeline runs; the response turns
it into a frozen ``ScoreBreakdown``. Keeping every signal on one record is what
makes a ranking explainable: nothing is folded away before the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attestor_arango.models import Memory, ScoreBreakdown
from attestor_arango.text.stemming import scoring_terms


@dataclass(slots=True)
class Candidate:
    memory: Memory
    lane_ranks: dict[str, int] = field(default_factory=dict)
    lane_scores: dict[str, float] = field(default_factory=dict)
    rrf: float = 0.0  # raw sum of 1 / (k + rank) over the lanes
    rrf_norm: float = 0.0  # rrf divided by its best possible value (or rrf itself)
    graph_hops: int | None = None
    graph_bonus: float = 0.0
    decay: float = 1.0
    boost: float = 0.0
    freshness: float = 0.0  # <= 0: an older statement of a newer candidate's topic
    session: float = 0.0  # support from neighbouring turns (neighbours.py)
    coverage: float = 0.0  # share of the query's terms the candidate and its session contain
    time_cue: float = 0.0  # the query asks when and the candidate says when (timecue.py)
    relevance: float = 0.0  # everything but diversity
    mmr: float | None = None
    final: float = 0.0
    synthetic: bool = False
    terms: tuple[str, ...] | None = None  # scoring terms of the content, once known

    @property
    def id(self) -> str:
        return self.memory.id

    _t_created: int | None = None

    @property
    def t_created(self) -> int:
        if self._t_created is None:
            self._t_created = self.memory.us("t_created")
        return self._t_created

    def content_terms(self) -> tuple[str, ...]:
        """The content's scoring terms: handed over by the text lane, else tokenised once."""
        if self.terms is None:
            self.terms = scoring_terms(self.memory.content)
        return self.terms

    def base(self) -> float:
        """Lane relevance plus graph affinity: what decay scales."""
        return self.rrf_norm + self.graph_bonus

    def compute_relevance(self) -> float:
        self.relevance = round(
            self.base() * self.decay
            + self.boost
            + self.freshness
            + self.session
            + self.coverage
            + self.time_cue,
            12,
        )
        return self.relevance

    def breakdown(self) -> ScoreBreakdown:
        return ScoreBreakdown(
            vector_rank=self.lane_ranks.get("vector"),
            vector_score=self.lane_scores.get("vector"),
            bm25_rank=self.lane_ranks.get("bm25"),
            bm25_score=self.lane_scores.get("bm25"),
            lanes={k: self.lane_ranks[k] for k in sorted(self.lane_ranks)},
            rrf=round(self.rrf, 12),
            rrf_norm=round(self.rrf_norm, 12),
            graph_hops=self.graph_hops,
            graph_bonus=self.graph_bonus,
            mmr=None if self.mmr is None else round(self.mmr, 12),
            decay=round(self.decay, 12),
            boost=round(self.boost, 12),
            freshness=round(self.freshness, 12),
            session=round(self.session, 12),
            coverage=round(self.coverage, 12),
            time_cue=round(self.time_cue, 12),
            relevance=self.relevance,
            synthetic=self.synthetic,
            final=round(self.final, 12),
        )


def tie_key(score: float, c: Candidate) -> tuple[float, int, str]:
    """The one tie rule: score desc, t_created desc, id asc."""
    return (-round(score, 12), -c.t_created, c.id)


def order(cands: list[Candidate], attr: str = "relevance") -> list[Candidate]:
    return sorted(cands, key=lambda c: tie_key(float(getattr(c, attr)), c))
