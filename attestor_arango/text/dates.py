"""Date words: month and weekday names, for ingest's time expressions and recall's time cues."""

from __future__ import annotations

MONTH_NAMES: tuple[str, ...] = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "january": ("jan",),
    "february": ("feb",),
    "march": ("mar",),
    "april": ("apr",),
    "june": ("jun",),
    "july": ("jul",),
    "august": ("aug",),
    "september": ("sep", "sept"),
    "october": ("oct",),
    "november": ("nov",),
    "december": ("dec",),
}
# every month name and abbreviation -> its number (1-12)
MONTHS: dict[str, int] = {
    name: number
    for number, month in enumerate(MONTH_NAMES, start=1)
    for name in (month, *_ABBREVIATIONS.get(month, ()))
}
WEEKDAYS: tuple[str, ...] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)


def month_number(name: str) -> int:
    """1-12 for a month name or abbreviation (any case); raises ``KeyError`` for others."""
    return MONTHS[name.lower()]
