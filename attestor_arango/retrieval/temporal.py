"""Time-aware scoring: confidence decay and recency boost.

Both read "now" from the view's ``as_of`` (the replay guarantee needs that), never
the wall clock, and measure a memory's age on the event-time axis (``valid_from``):
when the fact was said to start holding. A fact dated after ``as_of`` has age 0.

- decay: ``floor + (1 - floor) * confidence * 0.5 ** (age / half_life)``, a
  multiplier on lane relevance plus graph bonus;
- boost: ``recency_boost * exp(-age / tau)``, added.

Which of two statements is the newer one that replaces the other is freshness.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attestor_arango.retrieval.candidates import Candidate, update_relevance
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.rounding import round_array, round_list

US_PER_DAY = 86_400_000_000


def age_days(candidate: Candidate, as_of: int) -> float:
    return max(0, as_of - candidate.valid_from) / US_PER_DAY


def apply_decay_boost(cands: Sequence[Candidate], as_of: int, config: RetrievalConfig) -> None:
    """Sets each candidate's decay and boost from its age at ``as_of``, then its relevance.

    Per candidate, in Python floats as always: the age, ``0.5 ** (age / half_life)`` and
    ``exp(-age / tau)`` (numpy's transcendental kernels may differ from libm in the
    last bit); the arithmetic around them and the rounding to 12 places run over
    arrays, the same IEEE operations in the same order (``round_array`` equals
    ``round(x, 12)``; ``tests/test_relevance_arrays.py`` compares both paths).
    """
    if not cands:
        return
    # age_days, inline, and its max(0, gap) as a test (the builtin's call parses keywords:
    # ~700 instructions a candidate); a gap of 0 or less is the int 0 either way
    ages = [(gap if gap > 0 else 0) / US_PER_DAY for gap in [as_of - c.valid_from for c in cands]]
    if config.decay_enabled:
        half_life, floor = config.decay_half_life_days, config.decay_floor
        fades = np.array([0.5 ** (age / half_life) for age in ages], dtype=np.float64)
        confidence = np.array([c.fields["confidence"] for c in cands], dtype=np.float64)
        # rounded as the array it is (round_list would take it back from a list)
        decays = round_array(floor + (1.0 - floor) * confidence * fades, 12).tolist()
        for c, decay in zip(cands, decays, strict=True):
            c.decay = decay
    if config.boost_enabled:
        tau, boost = config.recency_tau_days, config.recency_boost
        raw = [boost * math.exp(-age / tau) for age in ages]
        for c, value in zip(cands, round_list(raw, 12), strict=True):
            c.boost = value
    update_relevance(cands)
