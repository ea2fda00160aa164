"""The vector shape checks both backends share (store/codec.py), written once."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.errors import ValidationError
from attestor_arango.store.codec import query_vector, replacement_vector, stored_vector
from attestor_arango.store.protocol import EmbeddingSpace

PACKAGE = Path(__file__).resolve().parents[1] / "attestor_arango"
SPACE = EmbeddingSpace("hashing-v1-4", 4)


def test_a_vector_of_the_space_comes_back_as_float32() -> None:
    for check in (
        lambda v: stored_vector(v, SPACE),
        lambda v: query_vector(v, 4),
        lambda v: replacement_vector("m1", v, SPACE),
    ):
        got = check([1, 0, 0.5, 2])
        assert got.dtype == np.float32 and got.tolist() == [1.0, 0.0, 0.5, 2.0]


def test_another_shape_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValidationError, match="embed with the tenant's embedder"):
        stored_vector(np.ones(5), SPACE)
    with pytest.raises(ValidationError, match="embedding space None"):
        stored_vector(np.ones(4), None)  # a tenant without a space yet
    with pytest.raises(
        ValidationError, match=r"shape \(2, 2\), the tenant's space has dimension 4"
    ):
        query_vector(np.ones((2, 2)), 4)
    with pytest.raises(ValidationError, match="vector for m7 has shape"):
        replacement_vector("m7", np.ones(3), SPACE)


def test_no_backend_checks_a_vector_shape_itself() -> None:
    """Both backends call the shared checks: a shape comparison with a dimension anywhere
    else in the store is a second copy of one (three were, in each backend)."""
    shape_check = re.compile(r"\.shape\s*!=\s*\(\s*[\w.]*dimension\s*,\s*\)")
    copies = [
        str(path.relative_to(PACKAGE))
        for path in (PACKAGE / "store").rglob("*.py")
        if path.name != "codec.py" and shape_check.search(path.read_text())
    ]
    assert copies == []
