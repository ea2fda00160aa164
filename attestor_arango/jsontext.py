"""JSON text read strictly: every interface reads a request, a key file, a setting, a hook
event or a transcript line through ``load_json``, so each refuses the same things (a key
given twice, ``NaN``/``Infinity``, a number past a float, nesting too deep for the reader)
with the same ``ValidationError``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from attestor_arango.errors import ValidationError


def load_json(text: str | bytes, what: str) -> Any:
    """``text`` read as JSON, refusing an object that gives a key twice.

    Python's reader (like most) keeps the last of two equal keys silently, so
    ``{"limit": 1, "limit": 1000}`` would be read as whichever value a reader keeps: a
    request whose meaning depends on the parser. Python's reader also takes ``NaN``,
    ``Infinity`` and ``-Infinity``, which are not JSON, and reads ``1e999`` as infinity;
    neither is a number any store, ranking or other reader agrees on, so both are refused
    here. Raises ``ValidationError`` naming ``what`` for a repeated key, such a literal or
    number, text that is not JSON (or not UTF-8), nesting too deep for the reader, or an
    integer too long to read.
    """
    try:
        return json_or_error(text, what)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(f"{what} is not valid JSON: {exc}") from None


def json_or_error(text: str | bytes, what: str) -> Any:
    """``load_json``'s reading, except that text that is not JSON raises the reader's own
    ``json.JSONDecodeError`` (``UnicodeDecodeError`` for bytes that are not UTF-8): for a
    reader of YAML or JSON (``config.load_yaml``), which reads such text as YAML."""
    try:
        return json.loads(
            text,
            object_pairs_hook=lambda pairs: _unique_keys(pairs, what),
            parse_constant=lambda literal: _not_a_number(literal, what),
            parse_float=lambda literal: finite_number(literal, what),
        )
    except (ValidationError, json.JSONDecodeError, UnicodeDecodeError):
        raise
    except (ValueError, RecursionError):  # an integer of >4300 digits, deep nesting
        raise ValidationError(
            f"{what} nests too deeply or holds a number too long to read"
        ) from None


def _unique_keys(pairs: list[tuple[str, Any]], what: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            shown = key if len(key) <= 64 else key[:64] + "..."
            raise ValidationError(
                f"{what} gives the key {shown!r} twice; send each key once", key=shown
            )
        found[key] = value
    return found


def _not_a_number(literal: str, what: str) -> float:
    raise ValidationError(
        f"{what} holds {literal}, which JSON does not allow (its numbers are finite); send a "
        "number or null",
        literal=literal,
    )


def finite_number(literal: str, what: str) -> float:
    """``literal`` (JSON or plain-digit text) as a float; ``ValidationError`` naming ``what``
    when it is past a 64-bit float (Python reads ``1e999`` as infinity)."""
    value = float(literal)
    if not math.isfinite(value):
        shown = literal if len(literal) <= 40 else literal[:40] + "..."
        raise ValidationError(
            f"{what} holds the number {shown}, too large for a 64-bit float; send a finite number",
            literal=shown,
        )
    return value
