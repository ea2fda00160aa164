"""Query-string parameters of the Evidence Board pages, checked before any read.

Every page is a GET whose whole state is in its URL (so any view can be bookmarked,
shared and replayed); these helpers turn that URL into typed arguments and refuse bad
values with a ValidationError that says what to send instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attestor_arango.errors import ValidationError
from attestor_arango.validation import int_from_text

MAX_PER_PAGE = 200
STATUSES = ("active", "superseded", "archived", "all")


def text(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def number(params: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = text(params, name)
    if raw is None:
        return default
    try:
        value = int_from_text(raw, name)
    except ValidationError:
        raise ValidationError(f"{name} must be a whole number from {lo} to {hi}") from None
    if not lo <= value <= hi:
        raise ValidationError(f"{name} must be a whole number from {lo} to {hi}")
    return value


def as_of(params: Mapping[str, str]) -> str | None:
    """The ``as_of`` instant as ISO-8601; a browser's ``datetime-local`` value means UTC."""
    raw = text(params, "as_of")
    if raw is None:
        return None
    _, sep, clock = raw.partition("T")
    if sep and not (clock.endswith("Z") or "+" in clock or "-" in clock):
        raw += "Z"
    return raw


def status(params: Mapping[str, str]) -> str | None:
    value = text(params, "status")
    if value is not None and value not in STATUSES:
        raise ValidationError(f"status must be one of {', '.join(STATUSES)}")
    return value


@dataclass(frozen=True)
class Paging:
    page: int
    per: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per

    @classmethod
    def of(cls, params: Mapping[str, str], per: int = 50) -> Paging:
        return cls(
            page=number(params, "page", 1, 1, 1_000_000),
            per=number(params, "per", per, 1, MAX_PER_PAGE),
        )
