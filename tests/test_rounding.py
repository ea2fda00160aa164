"""``round_array`` against Python's ``round``, bit for bit (retrieval/rounding.py)."""

from __future__ import annotations

import math
import random
import struct
import warnings

import numpy as np
import pytest

from attestor_arango.retrieval.rounding import round12, round_array, round_list


def bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def near_halves(digits: int, rng: random.Random, count: int) -> list[float]:
    """Floats within a few ulps of (k + 0.5) / 10**digits: where a plain rint of
    ``x * 10**digits`` can round the other way from Python's exact rounding."""
    out: list[float] = []
    for _ in range(count):
        k = rng.randrange(0, 2 * 10**digits)
        centre = (k + 0.5) / 10**digits
        x = centre
        for _ in range(rng.randrange(0, 4)):
            x = math.nextafter(x, math.inf if rng.random() < 0.5 else -math.inf)
        out.append(x if rng.random() < 0.8 else -x)
    return out


def samples(digits: int) -> list[float]:
    rng = random.Random(digits)
    scales = [1e-14, 1e-9, 1e-3, 1.0, 2.0, 5e3, 1e6]
    values = [rng.random() * rng.choice(scales) for _ in range(20_000)]
    values += [-v for v in values[:5_000]]
    values += near_halves(digits, rng, 20_000)
    values += [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5e-12, -2.5e-12, 1e-13, -1e-13, 1e300, -1e300]
    values += [math.inf, -math.inf, 5e-324, 0.1 + 0.2, 1 / 3, 2.675, 0.125, 4503.599627370496]
    return values


@pytest.mark.parametrize("digits", [6, 9, 12])
def test_round_array_equals_python_round_bit_for_bit(digits: int) -> None:
    values = samples(digits)
    got = round_array(values, digits).tolist()
    want = [round(v, digits) for v in values]
    assert [bits(g) for g in got] == [bits(w) for w in want]
    assert [bits(g) for g in round_list(values, digits)] == [bits(w) for w in want]


def test_nan_stays_nan_and_empty_is_empty() -> None:
    assert math.isnan(round_array([math.nan], 12)[0])
    assert round_list([], 12) == []


def test_round_list_reads_every_kind_of_number_as_an_array_would() -> None:
    # round_list packs its values as doubles (struct) where round_array reads the list
    # (np.asarray): ints, bools, numpy scalars, signed zeros, NaN and infinities must reach
    # numpy as the same float64, so both give the same floats, bit for bit
    rng = random.Random(5)
    values: list[float] = [rng.random() * rng.choice([1e-9, 1.0, 1e6]) for _ in range(300)]
    values += [0, 7, -3, True, False, 2**52 + 1, np.float32(0.1), np.float64(1 / 3), np.int64(9)]  # type: ignore[list-item]
    values += [-0.0, math.inf, -math.inf, 1e300, 5e-324, 0.5e-12, 2.5e-12]
    got = round_list(values, 12)
    want = round_array(np.asarray(values, dtype=np.float64), 12).tolist()
    assert [bits(g) for g in got] == [bits(w) for w in want]
    assert all(type(g) is float for g in got)
    nan = round_list([0.25, math.nan], 12)
    assert nan[0] == 0.25 and math.isnan(nan[1])


def test_the_fallback_is_what_keeps_it_exact() -> None:
    """Without the Python fallback (a plain rint of x * 10**12), values next to a half
    round differently: the comparison above can fail."""
    values = near_halves(12, random.Random(1), 20_000)
    naive = (np.rint(np.asarray(values) * 1e12) / 1e12).tolist()
    want = [round(v, 12) for v in values]
    assert any(bits(a) != bits(b) for a, b in zip(naive, want, strict=True))
    assert [bits(g) for g in round_array(values, 12).tolist()] == [bits(w) for w in want]


def test_round12_equals_python_round_next_to_the_halves() -> None:
    """The scalar form (``round12``, what ``compute_relevance`` rounds with) on the same
    values: next to the halves, both zeros, the infinities, the large and the tiny."""
    values = samples(12)
    got = [round12(v) for v in values]
    want = [float(round(v, 12)) for v in values]
    assert [bits(g) for g in got] == [bits(w) for w in want]
    assert math.isnan(round12(math.nan))
    assert bits(round12(-1e-14)) == bits(-0.0) and bits(round12(-0.0)) == bits(-0.0)


@pytest.mark.parametrize("digits", [6, 9, 12])
def test_arrays_inside_the_window_bit_for_bit_without_warnings(digits: int) -> None:
    """Arrays whose every value is finite and small (the usual case, which skips numpy's
    error state): whole and in pipeline-sized pieces, next to the halves included."""
    values = [v for v in samples(digits) if math.isfinite(v) and abs(v) * 10**digits < 2**40]
    want = [bits(round(v, digits)) for v in values]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [bits(g) for g in round_array(values, digits).tolist()] == want
        for start in range(0, len(values), 60):
            piece = values[start : start + 60]
            got = round_array(np.asarray(piece), digits).tolist()
            assert [bits(g) for g in got] == want[start : start + 60]


@pytest.mark.parametrize(
    "values",
    [[1e300, 0.25], [math.inf, 0.5], [-math.inf, math.inf], [1.7e308, -1e-13], [2.0**41, 1.0]],
)
def test_large_or_infinite_values_round_as_python_does_and_raise_no_warning(
    values: list[float],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = round_array(values, 12).tolist()
        nan = round_array([math.nan, 1.0], 12).tolist()
    assert [bits(g) for g in got] == [bits(round(v, 12)) for v in values]
    assert math.isnan(nan[0]) and nan[1] == 1.0
