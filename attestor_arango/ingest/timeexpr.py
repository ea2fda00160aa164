"""Time expressions in conversation text, resolved against the turn's own time.

"the first weekend of August" stays a window (Saturday 00:00 to Monday 00:00),
"last month" stays a month, "since 2019" opens an interval; the expression is
kept verbatim next to the resolved bounds so nothing is rounded away. The
anchor is always the time the turn was spoken, never the time of ingest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from attestor_arango.clock import OPEN, from_us, to_us
from attestor_arango.text.dates import MONTHS, WEEKDAYS

NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(WEEKDAYS)
_NUM = r"\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True))
_UNIT = r"days?|weeks?|months?|years?"


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A resolved expression: ``[start, end)`` in microseconds, OPEN for an open end."""

    expression: str
    start: int
    end: int
    precision: str  # day | weekend | week | month | season | year | instant
    mode: str = "window"  # window | since | until


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return datetime(year, month, 1, tzinfo=UTC)


def _span(expr: str, start: datetime, end: datetime, precision: str) -> TimeSpan:
    return TimeSpan(expr, to_us(start), to_us(end), precision)


def _weekend_of(day: datetime) -> datetime:
    """Saturday of the weekend containing or following ``day``."""
    if day.weekday() == 6:
        return _day(day) - timedelta(days=1)
    return _day(day) + timedelta(days=(5 - day.weekday()) % 7)


def _nth_weekend(year: int, month: int, n: int) -> datetime:
    first = _month_start(year, month)
    saturdays = []
    d = first + timedelta(days=(5 - first.weekday()) % 7)
    while d.month == first.month:
        saturdays.append(d)
        d += timedelta(days=7)
    return saturdays[n - 1] if n > 0 else saturdays[-1]


def _year_for_month(month: int, anchor: datetime, direction: str | None) -> int:
    """The year a bare month name refers to: the nearest one in the stated direction."""
    if direction == "past":
        return anchor.year if month <= anchor.month else anchor.year - 1
    if direction == "future":
        return anchor.year if month >= anchor.month else anchor.year + 1
    return anchor.year


_RELATIVE_DAYS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(?:on\s+)?(\d{4})-(\d{2})-(\d{2})\b")),
    (
        "nth_weekend",
        re.compile(
            r"\b(?:on\s+|during\s+)?the\s+(first|second|third|fourth|last)\s+weekend\s+of\s+"
            rf"({_MONTH})\b(?:\s+(\d{{4}}))?",
            re.I,
        ),
    ),
    ("ago", re.compile(rf"\b({_NUM})\s+({_UNIT})\s+ago\b", re.I)),
    (
        "rel_period",
        re.compile(
            r"\b(last|this|next|past)\s+"
            r"(week|weekend|month|year|spring|summer|fall|autumn|winter)\b",
            re.I,
        ),
    ),
    ("rel_weekday", re.compile(rf"\b(last|this|next|on)\s+({_WEEKDAY})\b", re.I)),
    (
        "month_day",
        re.compile(
            rf"\b(?:on\s+)?({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
            r"(?:,?\s+(\d{4}))?",
            re.I,
        ),
    ),
    (
        "day_month",
        re.compile(
            r"\b(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            rf"({_MONTH})\b(?:,?\s+(\d{{4}}))?",
            re.I,
        ),
    ),
    ("month_year", re.compile(rf"\b({_MONTH})\s+(\d{{4}})\b", re.I)),
    ("month", re.compile(rf"\b(?:in|since|until|till|by|during|from)\s+({_MONTH})\b", re.I)),
    ("year", re.compile(r"\b(?:in|since|until|till|by|during|from)\s+((?:19|20)\d{2})\b", re.I)),
    (
        "relative_day",
        re.compile(
            r"\b(yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening))\b", re.I
        ),
    ),
]  # fmt: skip
_DIRECTION = re.compile(r"\b(since|until|till|by|from)\s*$", re.I)
_FUTURE_HINT = re.compile(r"\b(will|going to|gonna|plan(?:ning)? to|next|upcoming|soon)\b", re.I)


def find_time(text: str, anchor_us: int) -> TimeSpan | None:
    """The first time expression in ``text``, resolved against ``anchor_us``."""
    anchor = from_us(anchor_us)
    best: tuple[int, int, TimeSpan] | None = None
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            span = _resolve(kind, m, anchor, text)
            if span is None:
                continue
            prefix = _DIRECTION.search(text[: m.start()])
            head = m.group(0).split()[0].lower()
            marker = prefix.group(1).lower() if prefix else head
            start = m.start() - (len(prefix.group(0)) if prefix else 0)
            expr = text[start : m.end()].strip()
            if marker == "since" or marker == "from":
                span = TimeSpan(expr, span.start, OPEN, span.precision, "since")
            elif marker in {"until", "till", "by"}:
                span = TimeSpan(expr, span.start, span.end, span.precision, "until")
            else:
                span = TimeSpan(expr, span.start, span.end, span.precision)
            end = m.end()
            if best is None or _better(start, end, best[0], best[1]):
                best = (start, end, span)
            break
    return best[2] if best else None


def _better(start: int, end: int, best_start: int, best_end: int) -> bool:
    """Earliest expression first; of two that overlap, the longer ("in June 2025" over
    "in June")."""
    overlaps = start < best_end and best_start < end
    if overlaps:
        return end - start > best_end - best_start
    return start < best_start


def _resolve(kind: str, m: re.Match[str], anchor: datetime, text: str) -> TimeSpan | None:
    g = [x.lower() if isinstance(x, str) else x for x in m.groups()]
    expr = m.group(0)
    future = bool(_FUTURE_HINT.search(text))
    try:
        if kind == "iso":
            d = datetime(int(g[0]), int(g[1]), int(g[2]), tzinfo=UTC)
            return _span(expr, d, d + timedelta(days=1), "day")
        if kind == "nth_weekend":
            month = MONTHS[g[1]]
            year = (
                int(g[2]) if g[2] else _year_for_month(month, anchor, "future" if future else None)
            )
            sat = _nth_weekend(year, month, ORDINALS[g[0]])
            return _span(expr, sat, sat + timedelta(days=2), "weekend")
        if kind == "ago":
            n = int(g[0]) if g[0].isdigit() else NUMBERS[g[0]]
            unit = g[1].rstrip("s")
            if unit == "day":
                d = _day(anchor) - timedelta(days=n)
                return _span(expr, d, d + timedelta(days=1), "day")
            if unit == "week":
                d = _day(anchor) - timedelta(days=7 * n + anchor.weekday())
                return _span(expr, d, d + timedelta(days=7), "week")
            if unit == "month":
                s = _month_start(anchor.year, anchor.month - n)
                return _span(expr, s, _month_start(s.year, s.month + 1), "month")
            s = datetime(anchor.year - n, 1, 1, tzinfo=UTC)
            return _span(expr, s, datetime(anchor.year - n + 1, 1, 1, tzinfo=UTC), "year")
        if kind == "rel_period":
            rel, unit = g
            step = {"last": -1, "past": -1, "this": 0, "next": 1}[rel]
            if unit == "week":
                monday = _day(anchor) - timedelta(days=anchor.weekday()) + timedelta(weeks=step)
                return _span(expr, monday, monday + timedelta(days=7), "week")
            if unit == "weekend":
                in_weekend = anchor.weekday() >= 5
                sat = _weekend_of(anchor)  # this weekend: the current or the coming one
                if step < 0:
                    sat -= timedelta(days=7)
                elif step > 0 and in_weekend:
                    sat += timedelta(days=7)
                return _span(expr, sat, sat + timedelta(days=2), "weekend")
            if unit == "month":
                s = _month_start(anchor.year, anchor.month + step)
                return _span(expr, s, _month_start(s.year, s.month + 1), "month")
            if unit == "year":
                s = datetime(anchor.year + step, 1, 1, tzinfo=UTC)
                return _span(expr, s, datetime(anchor.year + step + 1, 1, 1, tzinfo=UTC), "year")
            first = SEASONS[unit]
            year = anchor.year + step
            if rel == "last" and first >= anchor.month:
                year = anchor.year - 1
            s = _month_start(year, first)
            return _span(expr, s, _month_start(s.year, s.month + 3), "season")
        if kind == "rel_weekday":
            rel, name = g
            target = WEEKDAYS.index(name)
            delta = target - anchor.weekday()
            if rel == "last" or (rel == "on" and not future):
                delta = delta - 7 if delta >= 0 else delta
            elif rel == "next" or rel == "on":
                delta = delta + 7 if delta <= 0 else delta
            d = _day(anchor) + timedelta(days=delta)
            return _span(expr, d, d + timedelta(days=1), "day")
        if kind in {"month_day", "day_month"}:
            month_name, day = (g[0], g[1]) if kind == "month_day" else (g[1], g[0])
            month = MONTHS[month_name]
            year = int(g[2]) if g[2] else _year_for_month(month, anchor, None)
            d = datetime(year, month, int(day), tzinfo=UTC)
            return _span(expr, d, d + timedelta(days=1), "day")
        if kind == "month_year":
            s = _month_start(int(g[1]), MONTHS[g[0]])
            return _span(expr, s, _month_start(s.year, s.month + 1), "month")
        if kind == "month":
            month = MONTHS[g[0]]
            if g[0] == "may" and not re.search(r"\bin\s+may\b", expr, re.I):
                return None  # "may" is usually the verb
            ahead = future or expr.lower().startswith(("until", "till", "by"))
            s = _month_start(_year_for_month(month, anchor, "future" if ahead else "past"), month)
            return _span(expr, s, _month_start(s.year, s.month + 1), "month")
        if kind == "year":
            y = int(g[0])
            s = datetime(y, 1, 1, tzinfo=UTC)
            return _span(expr, s, datetime(y + 1, 1, 1, tzinfo=UTC), "year")
        if kind == "relative_day":
            offset = _RELATIVE_DAYS.get(g[0], 0)
            d = _day(anchor) + timedelta(days=offset)
            return _span(expr, d, d + timedelta(days=1), "day")
    except (ValueError, IndexError, KeyError):
        return None  # "February 30": not a date, so not a time expression
    return None
