"""Time: one representation, one injectable source.

Stored times are integer microseconds since the Unix epoch (UTC). Open intervals
use the far-future sentinel ``OPEN`` rather than null, because null sorts first
in AQL and would make ``t_expired > @t`` false for open rows.

``TickClock`` hands out strictly increasing ticks. Reads and writes both take a
tick, so a write that follows a read always gets a later transaction time and
``as_of`` replays of that read can never see it.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

from attestor_arango.errors import ValidationError, shown

OPEN: int = 253_402_300_799_000_000  # 9999-12-31T23:59:59Z in microseconds
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    def now_us(self) -> int:
        """Current time in integer microseconds since the epoch."""
        ...


class SystemClock:
    """The wall clock."""

    def now_us(self) -> int:
        return time.time_ns() // 1000


class ManualClock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime | int = 1_767_225_600_000_000) -> None:
        self._now = start if isinstance(start, int) else to_us(start)

    def now_us(self) -> int:
        return self._now

    def set(self, value: datetime | int) -> None:
        self._now = value if isinstance(value, int) else to_us(value)

    def advance(self, *, seconds: float = 0, days: float = 0) -> None:
        self._now += round((seconds + days * 86_400) * 1_000_000)


class TickClock:
    """Wraps a clock so that every call returns a strictly larger value."""

    def __init__(self, source: Clock) -> None:
        self.source = source
        self._last = 0
        self._lock = threading.Lock()

    def now_us(self) -> int:
        with self._lock:
            value = max(self.source.now_us(), self._last + 1)
            self._last = value
            return value

    def peek(self) -> int:
        """What ``now_us`` would be, without handing out a tick: for a check that stores
        nothing, so checking leaves every later transaction time as it was."""
        with self._lock:
            return max(self.source.now_us(), self._last + 1)

    @property
    def last(self) -> int:
        """The most recent tick handed out (the "now" of the latest read or write)."""
        return self._last


def to_us(value: datetime) -> int:
    """A timezone-aware datetime to microseconds; naive datetimes are refused."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(
            f"naive datetime {value.isoformat()} has no timezone; pass an aware datetime "
            "(e.g. datetime(..., tzinfo=UTC)) or an ISO string ending in Z or +00:00",
        )
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int) -> datetime:
    """Microseconds to an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=value)


MIN_US: int = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z
_MAX_EPOCH_S = 1e12  # epoch seconds far beyond both ends of the years 1-9999


def parse_time(value: datetime | str | int | float, *, field: str = "time") -> int:
    """Accepts an aware datetime, an ISO-8601 string with an offset, or epoch seconds,
    between the years 1 and 9999 (the open-interval sentinel itself is not a time)."""
    return in_range(_parse_time(value, field), value, field)


def parse_past(value: datetime | str | int | float, now: int, *, field: str) -> int:
    """``parse_time`` for a time that must have happened (``as_of``): one after ``now`` is
    refused as the future before its range is checked, so the last second of 9999 (the
    open end, ``OPEN``) or a year past 9999 reads as the future it is, as the second
    before does. Raises ``ValidationError``."""
    us = _parse_time(value, field)
    if us > now:
        raise ValidationError(
            f"{field} is in the future; the past can be replayed, the future not yet"
        )
    return in_range(us, value, field)


def in_range(us: int, value: object, field: str) -> int:
    """``us`` when it lies in the years 1-9999 before ``OPEN``; raises ``ValidationError``
    saying which bound it passed (the last second of 9999 is the mark of an open end: a
    year the caller wrote is not "outside the years 1-9999")."""
    if MIN_US <= us < OPEN:
        return us
    if OPEN <= us < OPEN + 1_000_000:
        raise ValidationError(
            f"{field}: {shown(value)} is the last second of the year 9999, which the store "
            "keeps to mean no end; pass an earlier timestamp (an open end is no time at all)",
        )
    raise ValidationError(
        f"{field}: {shown(value)} is outside the years 1-9999; pass a real timestamp",
    )


# a plain number as text: ASCII digits, an optional '-' and fraction (``\d`` would also take
# other scripts' digits, "٣", which a caller sees as no number at all)
DECIMAL_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def time_from_text(text: str) -> str | int | float:
    """A time written as text (a command-line flag, a query string): epoch seconds when it
    is a plain number, so it means what the same number means to ``parse_time``; any other
    text is returned stripped, for ``parse_time`` to read as ISO-8601."""
    value = text.strip()
    if DECIMAL_TEXT.fullmatch(value):
        return float(value) if "." in value else int(value)
    return value


def _parse_time(value: datetime | str | int | float, field: str) -> int:
    if isinstance(value, bool):
        raise ValidationError(f"{field}: expected a timestamp, got a boolean")
    if isinstance(value, datetime):
        return to_us(value)
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValidationError(f"{field}: {shown(value)} is not a timestamp")
        if abs(value) > _MAX_EPOCH_S:  # checked before scaling: 1e303 s would overflow
            raise ValidationError(
                f"{field}: {shown(value)} is outside the years 1-9999; pass a real timestamp",
            )
        return round(value * 1_000_000)
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 10 and text[4] == "-" and text[7] == "-":
            text += "T00:00:00+00:00"  # a bare date means its UTC midnight
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValidationError(
                f"{field}: {shown(value)} is not an ISO-8601 timestamp; "
                "use e.g. 2026-03-01T00:00:00Z",
            ) from exc
        if parsed.tzinfo is None:
            raise ValidationError(
                f"{field}: {shown(value)} has no timezone; append Z or an offset such as +00:00",
            )
        return to_us(parsed)
    raise ValidationError(f"{field}: unsupported timestamp type {type(value).__name__}")


SKEW_US: int = 60_000_000  # how far ahead of this server's clock a given time may be


def check_not_ahead(value: int, now: int, *, field: str, skew_us: int = SKEW_US) -> int:
    """Refuses a time given by a client or an import that lies after ``now`` + ``skew_us``.

    Such a time would be stored as something the tenant already knew "in the future".
    A message time (``skew_us`` default) is never fed to the shared clock; a transaction
    time an import stores is checked with ``skew_us=0``, so it never lies past a tick
    already handed out and nothing one tenant sends can move the time, quota day or chain
    of another. Raises ``ValidationError``.
    """
    if value > now + skew_us:
        slack = f" (plus {skew_us // 1_000_000}s of clock skew)" if skew_us else ""
        raise ValidationError(
            f"{field} {iso(value)} is after this server's time {iso(now)}{slack}; "
            "send a time that has happened",
            field=field,
        )
    return value


def iso(value: int | None) -> str | None:
    """Microseconds to ISO-8601 with Z; OPEN and None map to None."""
    if value is None or value >= OPEN:
        return None
    return from_us(value).isoformat().replace("+00:00", "Z")
