"""``round(x, digits)`` over a whole array at once, equal to Python's bit for bit.

Python rounds a float to ``digits`` decimal places exactly: it takes the float's exact
binary value times ``10**digits``, rounds that to the nearest integer ``N`` (half to
even) and returns the double nearest to ``N / 10**digits``. That costs ~0.9 us per
call (a correctly rounded decimal conversion), and the pipeline rounds every
candidate's scores several times per recall.

The array form does the same arithmetic in float64: ``y = x * 10**digits`` is the exact
product to within half an ulp of ``y``; when ``|y| < 2**41`` that error is at most
``2**-12``, so if ``y`` lies less than ``0.499`` from its nearest integer ``n``, the exact
product is less than ``0.5`` from ``n`` and ``n`` is Python's ``N`` (no tie is possible).
``n`` is then an exact double and ``n / 10**digits`` one IEEE division, correctly
rounded to the nearest double like Python's decimal-to-float step, so the two results
are the same double (the sign of a zero included: ``rint`` keeps it). Values outside
that window (near a half, large, not finite) are rounded by Python's ``round`` itself.
When the largest ``|x| * 10**digits`` (a Python float: no numpy warning) is inside the
window, no step can overflow or be invalid, so the usual case sets no numpy error state
(``np.errstate`` costs about two ufunc calls) and tests one bound per value.
``tests/test_rounding.py`` compares both on values built to sit next to the halves.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import floor
from struct import pack

import numpy as np

_LIMIT = float(2**41)  # |x * 10**digits| below this: the product is off by <= 2**-12
_MARGIN = 0.499  # nearer than this to an integer: no half can be in between


def round_array(values: np.ndarray | Sequence[float], digits: int) -> np.ndarray:
    """``[round(float(v), digits) for v in values]`` as a float64 array (``digits`` 0-15)."""
    x = np.asarray(values, dtype=np.float64)
    scale = float(10**digits)
    if x.size and float(np.maximum.reduce(np.abs(x))) * scale < _LIMIT:
        # every |y| is below the limit (float rounding is monotonic) and finite, so no
        # step can overflow or be invalid: no error state to set, one test left per value
        y = x * scale
        out = np.rint(y)
        off = np.abs(np.subtract(y, out, out=y), out=y)
        np.divide(out, scale, out=out)
        if not np.maximum.reduce(off) < _MARGIN:
            for k in np.flatnonzero(off >= _MARGIN).tolist():
                out[k] = round(float(x[k]), digits)
        return out
    with np.errstate(invalid="ignore", over="ignore"):
        y = x * scale
        n = np.rint(y)
        safe = (np.abs(y - n) < _MARGIN) & (np.abs(y) < _LIMIT)
        out = n / scale
    if not safe.all():
        for k in np.flatnonzero(~safe).tolist():
            out[k] = round(float(x[k]), digits)
    return out


def round_list(values: Sequence[float], digits: int) -> list[float]:
    """``round_array`` as a list of Python floats. The values reach numpy as their packed
    doubles (``struct``: each value's ``float``, 8 bytes, the very float64 that
    ``np.asarray`` would make, in ~100 instructions a value instead of its ~300 reading a
    list; decay rounds ~170 values a recall, ``update_relevance`` ~85)."""
    if not values:
        return []
    x = np.frombuffer(pack(f"{len(values)}d", *values), dtype=np.float64)
    out: list[float] = round_array(x, digits).tolist()
    return out


def round12(x: float) -> float:
    """``round(x, 12)`` of one float, bit for bit, by ``round_array``'s arithmetic in Python
    floats: ``floor(y + 0.5)`` is ``y``'s nearest integer (``y + 0.5`` is exact below
    ``2**41``; a half, where it rounds up and ``round`` to even, is never safe), and a zero
    takes ``x``'s sign as ``rint`` keeps it (``x * 0.0``). ~1,000 instructions instead of
    ~3,600: the pipeline rounds a relevance for every candidate it changes. Values outside
    the window (near a half, large, not finite) go to ``round`` itself. For an int ``x``
    the result is a float (``round`` would give the int back).
    """
    y = x * 1e12
    if -_LIMIT < y < _LIMIT:
        n = floor(y + 0.5)
        if -_MARGIN < y - n < _MARGIN:
            return n / 1e12 if n else x * 0.0
    return float(round(x, 12))
