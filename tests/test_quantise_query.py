"""``quantize_query`` (store/embedded/quantise.py) is ``quantize`` of one vector, bit for bit.

The search uses the query's codes, scale and error bound to decide which rows are
re-scored; a last-bit difference could widen or narrow a bound, so the cheaper form
must give the very numbers ``quantize`` gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from attestor_arango.store.embedded.quantise import quantize, quantize_query


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    cases = [
        np.zeros(384, dtype=np.float32),
        np.full(384, 1e-30, dtype=np.float32),
        np.full(8, -2.5, dtype=np.float32),
        np.eye(16, dtype=np.float32)[3],
    ]
    for i in range(3000):
        dim = int(rng.choice([1, 2, 7, 64, 384, 768]))
        v = (rng.standard_normal(dim) * 10.0 ** rng.uniform(-20, 20)).astype(np.float32)
        if i % 5 == 0:
            v[rng.integers(0, dim)] = 0.0
        if i % 7 == 0:  # a peak exactly on a code level
            v[rng.integers(0, dim)] = np.float32(127.0)
        cases.append(v)
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantize_query_gives_quantize_s_codes_scale_and_error(dtype: type) -> None:
    for v in _cases():
        v = v.astype(dtype)
        codes, scale, err, _, _ = quantize(v)
        got = quantize_query(v)
        assert got.codes.dtype == np.int8 and got.codes.shape == (v.size,)
        assert np.array_equal(got.codes, codes[0])
        assert got.scale == float(scale[0])
        assert got.err == float(err[0])
