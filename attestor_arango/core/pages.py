"""``AgentMemory.list_page`` and its cursors: where the next page starts, the moment it reads.

A cursor pins the view: the first page reads at ``as_of`` (default now) and every later
page reads at that same moment, so writes made between two pages never shift, repeat or
skip a row (the store is bi-temporal: a past view never changes). It also carries a
digest of the filters and of the caller's tenant and namespace, so a cursor handed back
with other filters, or by a caller of another tenant or namespace, is refused instead of
paging through something else. The cursor holds no stored data: an offset, a time and a
digest, base64url-encoded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import replace
from typing import Any

from attestor_arango.clock import MIN_US, OPEN, from_us
from attestor_arango.context import AgentContext
from attestor_arango.core.reads import Listing, count_matching, list_matching
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ValidationError
from attestor_arango.jsontext import load_json
from attestor_arango.models import MemoryPage

_VERSION = 1


def filter_digest(filters: dict[str, Any]) -> str:
    """A short digest of the arguments that decide which rows a listing holds."""
    canonical = json.dumps(filters, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def encode_cursor(offset: int, as_of_us: int, digest: str) -> str:
    raw = json.dumps(
        {"v": _VERSION, "o": offset, "t": as_of_us, "f": digest}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, digest: str) -> tuple[int, int]:
    """(offset, as_of in microseconds) of a cursor made for these filters.

    Raises ``ValidationError`` for a damaged cursor or one made for other filters.
    """
    if not isinstance(cursor, str) or not cursor or len(cursor) > 512:
        raise ValidationError("cursor must be the next_cursor string of a previous page")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = load_json(base64.urlsafe_b64decode(padded.encode("ascii")), "cursor")
        offset, at, made_for = data["o"], data["t"], data["f"]
        ok = data.get("v") == _VERSION
    except (ValidationError, ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        raise ValidationError(
            "cursor is damaged; pass next_cursor exactly as the previous page returned it"
        ) from None
    if not ok or not all(type(v) is int for v in (offset, at)) or offset < 0:
        raise ValidationError("cursor is damaged; start again without a cursor")
    if not MIN_US <= at < OPEN:
        raise ValidationError("cursor is damaged; start again without a cursor")
    if made_for != digest:
        raise ValidationError(
            "this cursor was made for other filters or another tenant or namespace; pass the "
            "same filters, as the same caller, as for the first page, or start again without "
            "a cursor",
        )
    return offset, at


def list_page(
    rt: Runtime, ctx: AgentContext, listing: Listing, limit: int, cursor: str | None
) -> MemoryPage:
    """One page of ``list_matching`` with the listing's total and the next page's cursor.

    The first page pins ``listing.as_of`` (default now); a cursor carries that moment and
    a digest of the filters and the caller's scope. Raises ``ValidationError`` for a damaged
    cursor or one made for other filters or another scope, and what ``list_matching`` raises.
    """
    if cursor is None:  # first: an as_of ahead of now is refused as the future
        # (``Runtime.view``), the last second of 9999 too, which the filters call the open end
        offset, at_us = 0, rt.view(listing.as_of).as_of
    # whose listing it is counts as a filter: another scope's cursor is a foreign one
    digest = filter_digest(
        {**listing.arguments(ctx.namespace), "@scope": [ctx.tenant, ctx.namespace]}
    )
    if cursor is not None:
        offset, at_us = decode_cursor(cursor, digest)
    at = from_us(at_us)
    pinned = replace(listing, as_of=at)
    rows = list_matching(rt, ctx, pinned, limit, offset)
    total = count_matching(rt, ctx, pinned)
    end = offset + len(rows)
    following = encode_cursor(end, at_us, digest) if rows and end < total else None
    return MemoryPage(memories=tuple(rows), total=total, next_cursor=following, as_of=at)
