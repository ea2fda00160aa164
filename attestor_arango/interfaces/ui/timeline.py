"""Geometry of the entity timeline: two bars per version, event time and transaction time.

Pure arithmetic over the versions' timestamps, drawn by the template as SVG ``rect``
elements (attributes, not inline styles, so the page keeps a strict CSP). An open
interval runs to the right edge, which is the ``as_of`` instant when one is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from attestor_arango.clock import OPEN, iso
from attestor_arango.models import Memory

WIDTH = 960
LEFT = 170  # room for the row labels
ROW = 34
BAR = 11


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    y: float
    open_end: bool
    label: str


@dataclass(frozen=True)
class Row:
    memory: Memory
    y: float
    event: Bar
    tx: Bar


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    rows: tuple[Row, ...]
    start: str
    end: str


def timeline_chart(versions: list[Memory], end_us: int | None) -> Chart:
    """Rows in the order given (oldest belief first); times scaled onto one axis."""
    starts = [v.us(n) for v in versions for n in ("valid_from", "t_created")]
    closed = [v.us(n) for v in versions for n in ("valid_until", "t_expired") if v.us(n) < OPEN]
    lo = min(starts)
    hi = end_us if end_us is not None else max(starts + closed)
    if hi <= lo:
        hi = lo + 1_000_000
    if end_us is None:
        hi += (hi - lo) // 20  # a margin so the newest start is not on the edge
    span = WIDTH - LEFT - 10

    def bar(start: int, stop: int, y: float, what: str) -> Bar:
        open_end = stop >= OPEN
        stop = min(stop if not open_end else hi, hi)
        x0 = LEFT + (min(start, hi) - lo) / (hi - lo) * span
        x1 = LEFT + (stop - lo) / (hi - lo) * span
        label = f"{what}: {iso(start)} .. {iso(stop) if not open_end else 'open'}"
        return Bar(round(x0, 2), round(max(x1 - x0, 2.0), 2), y, open_end, label)

    rows = []
    for i, v in enumerate(versions):
        y = 8 + i * ROW
        rows.append(
            Row(
                memory=v,
                y=y,
                event=bar(v.us("valid_from"), v.us("valid_until"), y, "valid"),
                tx=bar(v.us("t_created"), v.us("t_expired"), y + BAR + 2, "believed"),
            )
        )
    return Chart(
        width=WIDTH,
        height=16 + len(rows) * ROW,
        left=LEFT,
        rows=tuple(rows),
        start=iso(lo) or "",
        end=iso(hi) or "",
    )
