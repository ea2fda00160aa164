"""Every retrieval constant in one place, overridable from the YAML config.

``Config.retrieval`` (a plain dict in the YAML file) is validated here: an
unknown key is an error rather than a silently ignored typo, so an ablation run
can never believe it switched a step off when it did not.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from attestor_arango.errors import ValidationError
from attestor_arango.memo import memo

# the largest integer setting taken: counts of rows and candidates, far above any store's
# (a larger one would only make a recall allocate or loop for nothing)
MAX_INT = 1_000_000_000


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    # candidate lanes ---------------------------------------------------------
    vector_enabled: bool = True
    bm25_enabled: bool = True
    vector_k: int = 50
    text_k: int = 50
    # APPROXIMATE from vector_prefilter_rows visible rows on (0 rows kept: the exact scan at
    # every size). There the embedded vector index scores exactly only the
    # vector_prefilter rows nearest the query by the signs of their int8 codes (Hamming
    # distance): the lane is the exact top-k of those rows, not of every row. Below it
    # (every store of up to 250k memories) the lane is exact. LoCoMo's 303 questions,
    # MiniLM, vector_k 50, 5000 kept: overlap@10 with the exact lane 1.000 at 300k and
    # .9993 at 1M (@50 .9997 / .9951; recall top 10 the same set for 95 of 95), the lane
    # 8 vs 24 ms at 300k and 16 vs 47 ms at 1M (p50); 2000 kept at 1M: .9931 / .9709.
    # The threshold counts the rows the recall's view sees, so a replay at the same
    # as_of decides alike. Both left out of the recall id at these defaults
    vector_prefilter: int = 5000
    vector_prefilter_rows: int = 250_000
    # re-score the text lane with BM25 statistics of the visible candidates only
    # (replay-stable); the index is asked for text_fetch_k rows first
    bm25_rescore: bool = True
    text_fetch_k: int = 200
    # lane completion (retrieval/completion.py): a candidate one lane returned but
    # another cut below its top-K is ranked in that lane too (by exact cosine, or by
    # the text pool's BM25), after the lane's top-K; fusion then sees a low rank
    # instead of "absent". LoCoMo window turn R@10 0.827 -> 0.887 (MiniLM)
    lane_completion: bool = True
    # fusion: reciprocal rank fusion as a fused score (sum of 1/(k+rank)),
    # normalised by its best possible value so the bonuses below are on a 0..1 scale
    rrf_k: int = 60
    vector_weight: float = 1.0  # weighted RRF: a lane's share of the fused score
    bm25_weight: float = 1.0
    # graph affinity (only when the query names known entities) ---------------
    graph_enabled: bool = True
    graph_max_depth: int = 2
    graph_bonus_0: float = 0.30
    graph_bonus_1: float = 0.20
    graph_bonus_2: float = 0.10
    graph_unreachable: float = -0.05
    # typed relations touching the query entities, as synthetic candidates ----
    relations_enabled: bool = True
    relation_base: float = 0.20
    relation_limit: int = 20
    # confidence decay and recency boost, against the view's as_of -----------
    decay_enabled: bool = True
    decay_half_life_days: float = 365.0
    decay_floor: float = 0.9
    boost_enabled: bool = True
    # at most 0.01: below the gap between two adjacent ranks in both lanes (~0.016 of the
    # fused score), so recency orders near-ties only; 0.05 let any statement a month newer
    # overtake the better match ("My brother lives in Glasgow" over "My sister lives in
    # Leeds" asked about the sister); which newer statement replaces an older is freshness
    recency_boost: float = 0.01
    recency_tau_days: float = 30.0
    # newer statement on the same topic wins: older near-duplicates demoted ---
    freshness_enabled: bool = True
    freshness_similarity: float = 0.9
    freshness_penalty: float = 0.15
    # a newer statement that announces a change ("moved to", "switched", "instead")
    # needs less similarity to the older one to count as its update
    freshness_cue_similarity: float = 0.35
    # only the top-n candidates by relevance can yield to an update, and only to one
    # that is itself among the freshness_update_rank most relevant: in a chat stored
    # with plain add some later turn is always "near" a good answer; only an update
    # that answers the query too may take its rank
    freshness_top_n: int = 3
    freshness_update_rank: int = 5
    # verbatim records (e.g. conversation turns) say what was said when; they never
    # update one another, so memories tagged so are left out of freshness
    freshness_exempt_tags: tuple[str, ...] = ("verbatim",)
    # neighbouring turns (retrieval/neighbours.py): a conversation turn gains this
    # share of the lane relevance of the turn it replies to or that replies to it;
    # the turns the neighbour_fetch best candidates reply to join the candidates.
    # 0 switches the step off
    neighbour_weight: float = 0.5
    neighbour_fetch: int = 10
    # a memory whose words end by asking (a conversation turn's own words, or a plain
    # memory's content: a question, its answer elsewhere) loses this much (one graph-hop
    # step); 0 switches it off
    asking_weight: float = 0.1
    # the question's speaker (retrieval/speakers.py): turns spoken by the person the
    # query asks about gain this graph bonus (one hop step); 0 switches it off
    speaker_weight: float = 0.1
    # session coverage (retrieval/coverage.py): the IDF-weighted share of the
    # query's terms held by the union of a candidate's session, weighted and added
    # to relevance
    coverage_enabled: bool = True
    session_coverage_weight: float = 0.3
    # time cues (retrieval/timecue.py), both switched by time_cue_enabled. When the
    # query asks when, a candidate whose text refers to a time other than its own
    # date ("yesterday", "last year", "in June") gains time_cue_weight (0.1: one
    # graph-hop step)
    time_cue_enabled: bool = True
    time_cue_weight: float = 0.1
    # ... and a candidate whose event time (valid_from) falls in a date the query
    # names ("on 13 October 2023", "in July 2023", "in June") gains this much
    date_match_weight: float = 0.1
    # optional LLM query lanes (never called unless switched on) --------------
    hyde_enabled: bool = False
    multi_query_enabled: bool = False
    multi_query_n: int = 3

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValidationError(f"retrieval.{f.name} must be a finite number, not {value}")
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
                raise ValidationError(
                    f"retrieval.{f.name} is {value}; settings are at most {MAX_INT:,}"
                )
        for name in (
            "vector_k",
            "text_k",
            "text_fetch_k",
            "rrf_k",
            "relation_limit",
            "multi_query_n",
            "neighbour_fetch",
            "freshness_update_rank",
        ):
            if getattr(self, name) < 1:
                raise ValidationError(f"retrieval.{name} must be >= 1")
        if self.vector_prefilter < 0:
            raise ValidationError("retrieval.vector_prefilter must be >= 0 (0: exact)")
        if self.vector_prefilter_rows < 0:
            raise ValidationError("retrieval.vector_prefilter_rows must be >= 0")
        if not 0 <= self.graph_max_depth <= 6:
            raise ValidationError("retrieval.graph_max_depth must be between 0 and 6")
        if not 0.0 <= self.decay_floor <= 1.0:
            raise ValidationError("retrieval.decay_floor must be between 0 and 1")
        for name in ("decay_half_life_days", "recency_tau_days"):
            if getattr(self, name) <= 0:
                raise ValidationError(f"retrieval.{name} must be > 0")

    def hop_bonus(self, hops: int | None) -> float:
        """The graph bonus for a hop distance; None means unreachable."""
        table = {0: self.graph_bonus_0, 1: self.graph_bonus_1, 2: self.graph_bonus_2}
        if hops is None:
            return self.graph_unreachable
        return table.get(hops, self.graph_unreachable)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """Canonical JSON of every setting (part of each recall id), made once per config."""
        return _canonical_json(self)

    def replace(self, **changes: Any) -> RetrievalConfig:
        return RetrievalConfig.from_dict({**self.to_dict(), **changes})

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> RetrievalConfig:
        raw = raw or {}
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ValidationError(
                f"unknown retrieval settings {unknown}; known ones: {sorted(known)}",
            )
        values: dict[str, Any] = {}
        for key, value in raw.items():
            default = getattr(cls(), key)
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ValidationError(f"retrieval.{key} must be true or false")
            elif isinstance(default, int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ValidationError(f"retrieval.{key} must be an integer")
            elif isinstance(default, tuple):
                if not isinstance(value, list | tuple) or not all(
                    isinstance(v, str) for v in value
                ):
                    raise ValidationError(f"retrieval.{key} must be a list of strings")
                value = tuple(value)
            elif isinstance(default, float):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValidationError(f"retrieval.{key} must be a number")
                value = float(value)
            values[key] = value
        return cls(**values)


# configs are frozen and hashable, and a process holds a handful
@memo(64)
def _canonical_json(config: RetrievalConfig) -> str:
    values = asdict(config)
    # the defaults leave the recall ids of before the settings existed (a store of up to
    # 250k rows ranks as it did then)
    if (values["vector_prefilter"], values["vector_prefilter_rows"]) == (5000, 250_000):
        del values["vector_prefilter"], values["vector_prefilter_rows"]
    return json.dumps(values, sort_keys=True, separators=(",", ":"))
