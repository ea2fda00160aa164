"""Retrieval settings refuse non-finite numbers and absurd integers, wherever they come from.

YAML and JSON readers refuse NaN and Infinity literals, but a caller building ``Config`` or
``RetrievalConfig`` in Python can still pass ``float("nan")`` or ``10**30``: a NaN weight
would make every comparison in the ranking false, and a huge ``vector_k`` a recall that
allocates for nothing. Both are refused with a ``ValidationError`` naming the setting.
"""

from __future__ import annotations

import math

import pytest

from attestor_arango.errors import ValidationError
from attestor_arango.retrieval.config import MAX_INT, RetrievalConfig


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("name", ["vector_weight", "recency_boost", "freshness_similarity"])
def test_a_non_finite_float_is_refused(name: str, value: float) -> None:
    with pytest.raises(ValidationError, match=name):
        RetrievalConfig.from_dict({name: value})
    with pytest.raises(ValidationError, match=name):
        RetrievalConfig().replace(**{name: value})


@pytest.mark.parametrize("name", ["vector_k", "text_fetch_k", "vector_prefilter_rows"])
def test_an_absurd_integer_is_refused(name: str) -> None:
    with pytest.raises(ValidationError, match=name):
        RetrievalConfig.from_dict({name: 10**30})
    assert getattr(RetrievalConfig.from_dict({name: MAX_INT}), name) == MAX_INT


def test_the_defaults_pass() -> None:
    assert RetrievalConfig() == RetrievalConfig.from_dict(RetrievalConfig().to_dict())
