"""Time-aware scoring: confidence decay, recency boost and freshness.

All three read "now" from the view's ``as_of`` (the replay guarantee needs
that), never the wall clock, and measure a memory's age on the event-time axis
(``valid_from``): when the fact was said to start holding. A fact dated after
``as_of`` has age 0.

- decay: ``floor + (1 - floor) * confidence * 0.5 ** (age / half_life)``, a
  multiplier on lane relevance plus graph bonus;
- boost: ``recency_boost * exp(-age / tau)``, added;
- freshness: a candidate that an event-later candidate restates (cosine at or
  above ``freshness_similarity``, same entity, another session) loses
  ``freshness_penalty``, so a newer statement of the same topic ranks above the
  stale one. Within one session, similar statements are a conversation going
  on, not an update.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .candidates import Candidate
from .config import RetrievalConfig
from .mmr import similarity_matrix

US_PER_DAY = 86_400_000_000


def age_days(candidate: Candidate, as_of: int) -> float:
    return max(0, as_of - candidate.memory.us("valid_from")) / US_PER_DAY


def apply_decay_boost(cands: Sequence[Candidate], as_of: int, config: RetrievalConfig) -> None:
    for c in cands:
        age = age_days(c, as_of)
        if config.decay_enabled:
            fade = 0.5 ** (age / config.decay_half_life_days)
            c.decay = round(
                config.decay_floor + (1.0 - config.decay_floor) * c.memory.confidence * fade, 12
            )
        if config.boost_enabled:
            c.boost = round(config.recency_boost * math.exp(-age / config.recency_tau_days), 12)
        c.compute_relevance()


def apply_freshness(
    cands: Sequence[Candidate], vectors: Mapping[str, np.ndarray], config: RetrievalConfig
) -> None:
    """Demotes candidates restated later by a similar candidate about the same entity."""
    items = [c for c in cands if not c.synthetic and c.id in vectors]
    if len(items) < 2:
        return
    sims = similarity_matrix(items, vectors)
    close = sims >= config.freshness_similarity
    np.fill_diagonal(close, False)
    for i in np.flatnonzero(close.any(axis=1)):
        older = items[int(i)]
        t_old = (older.memory.us("valid_from"), older.t_created)
        s_old = older.memory.provenance.session_id
        for j in np.flatnonzero(close[i]):
            newer = items[int(j)]
            if newer.memory.entity != older.memory.entity:
                continue
            if s_old is not None and s_old == newer.memory.provenance.session_id:
                continue  # one conversation going on, not a later update
            if (newer.memory.us("valid_from"), newer.t_created) > t_old:
                older.freshness = -config.freshness_penalty
                older.compute_relevance()
                break
