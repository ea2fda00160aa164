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

from attestor_arango.retrieval.candidates import Candidate, update_relevance
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.rounding import round_list

US_PER_DAY = 86_400_000_000


def age_days(candidate: Candidate, as_of: int) -> float:
    return max(0, as_of - candidate.valid_from) / US_PER_DAY


def apply_decay_boost(cands: Sequence[Candidate], as_of: int, config: RetrievalConfig) -> None:
    """Sets each candidate's decay and boost from its age at ``as_of``, then its relevance:
    every signal summed, those of the steps before it too (asking and the time cue set
    their own fields only; the pipeline runs this step after them).

    Per candidate, in Python floats as always: the age, ``0.5 ** (age / half_life)`` and
    ``exp(-age / tau)`` (numpy's transcendental kernels may differ from libm in the
    last bit) and the arithmetic around them; the rounding to 12 places runs over one
    array of the decays and boosts (``round_array`` equals ``round(x, 12)``;
    ``tests/test_relevance_arrays.py`` compares both paths). A list turned into an array
    costs ~300 instructions a value, so only what is rounded is converted.
    """
    if not cands:
        return
    # age_days, inline, and its max(0, gap) as a test (the builtin's call parses keywords:
    # ~700 instructions a candidate); a gap of 0 or less is the int 0 either way
    ages = [(gap if (gap := as_of - c.valid_from) > 0 else 0) / US_PER_DAY for c in cands]
    decay_on, boost_on = config.decay_enabled, config.boost_enabled
    raw: list[float] = []
    if decay_on:
        # floor + (1 - floor) * confidence * fade in Python floats: the IEEE operations an
        # array would do, in its order, without its two conversions from lists
        half_life, floor = config.decay_half_life_days, config.decay_floor
        keep = 1.0 - floor
        raw = [
            floor + keep * c.fields["confidence"] * 0.5 ** (age / half_life)
            for c, age in zip(cands, ages, strict=True)
        ]
    if boost_on:
        tau, boost, exp = config.recency_tau_days, config.recency_boost, math.exp
        raw += [boost * exp(-age / tau) for age in ages]
    # decays then boosts, rounded as one array (one array's fixed cost, not two)
    rounded = round_list(raw, 12)
    if decay_on and boost_on:  # both in one walk
        for c, decay, value in zip(cands, rounded, rounded[len(cands) :], strict=False):
            c.decay = decay
            c.boost = value
    elif decay_on:
        for c, decay in zip(cands, rounded, strict=True):
            c.decay = decay
    elif boost_on:
        for c, value in zip(cands, rounded, strict=True):
            c.boost = value
    update_relevance(cands)
