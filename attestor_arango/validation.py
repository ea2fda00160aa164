"""Input checks for the write and read paths; each failure says how to fix it."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from attestor_arango.clock import DECIMAL_TEXT, parse_time
from attestor_arango.errors import ValidationError, shown
from attestor_arango.jsontext import finite_number
from attestor_arango.text.blank import invisible

MAX_LABEL = 256
MAX_REASON = 2000  # a reason kept in the audit chain (forget, purge)
MAX_TAGS = 64
MAX_METADATA_BYTES = 1_048_576  # a memory's metadata as UTF-8 JSON: REST's largest body
MAX_METADATA_DEPTH = 32  # nesting of metadata, as REST bounds a request body

TimeInput = datetime | str | int | float
Window = tuple[TimeInput, TimeInput] | None  # a time_window argument: (start, end) or none
TagsInput = list[str] | tuple[str, ...] | None  # a tags argument as callers pass it


def check_content(content: object, max_chars: int) -> str:
    if not isinstance(content, str):
        raise ValidationError("content must be a string")
    if all(map(invisible, text := content.strip())):  # blank, or nothing a reader sees
        raise ValidationError("content is empty; pass the fact to remember as text")
    if len(text) > max_chars:
        raise ValidationError(
            f"content has {len(text)} characters, over the limit of {max_chars}; split it into "
            "smaller facts or raise max_content_chars in the config",
            limit=max_chars,
        )
    if "\x00" in text:
        raise ValidationError("content contains a NUL character")
    check_text(text, "content")
    return text


def check_text(text: str, what: str) -> str:
    """Refuses a lone UTF-16 surrogate (e.g. from JSON ``"\\ud800"``): no UTF-8 store holds it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{what} holds a lone UTF-16 surrogate, which is not text; send valid Unicode"
        ) from None
    return text


def check_query_size(query: str, max_chars: int) -> str:
    """``query`` if it is valid text of at most ``max_chars`` characters (the config's
    ``max_content_chars``: no memory is longer, so no longer question is needed, while
    ranking's cost grows with the query's words: a 1 MB query took ~2 s of CPU per
    recall). Raises ``ValidationError`` otherwise."""
    if len(query) > max_chars:
        raise ValidationError(
            f"query has {len(query)} characters, over the limit of {max_chars} (the longest "
            "memory text); ask with fewer words",
            limit=max_chars,
        )
    return check_text(query, "query")


def check_reason(value: object, what: str) -> str | None:
    """An optional free-text reason the audit chain keeps: None (or blank), else text of at
    most ``MAX_REASON`` characters. Raises ``ValidationError`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a string or None")
    text = check_text(value.strip(), what)
    if len(text) > MAX_REASON:
        raise ValidationError(f"{what} is longer than {MAX_REASON} characters; shorten it")
    return text or None


def check_label(value: object, what: str) -> str | None:
    """A short name (entity, category, an id it refers to): None, else one line of text with
    its whitespace collapsed, at most ``MAX_LABEL`` characters. Raises ``ValidationError``
    otherwise, and for a control character (NUL, an escape sequence), which no name needs
    and which a terminal showing the name would obey."""
    if value is None:
        return None
    if not isinstance(value, str) or all(map(invisible, value)):  # blank to a reader too
        raise ValidationError(f"{what} must be a non-empty string or None")
    text = label_form(value)
    if len(text) > MAX_LABEL:
        raise ValidationError(f"{what} is longer than {MAX_LABEL} characters")
    return check_plain(text, what)


def label_form(value: str) -> str:
    """A name as stored (``check_label``): single spaces, NFC (a composed and a decomposed
    "café" are one name: canonical equivalence changes no character a reader sees)."""
    return unicodedata.normalize("NFC", " ".join(value.split()))


def check_path(value: object, what: str, expected: str) -> str:
    """``value`` as a path (``str``/``os.PathLike``: not blank, no NUL, valid Unicode), else
    ``ValidationError`` "``what`` must be ``expected``" (``str(5)`` would be a file name)."""
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise ValidationError(f"{what} must be {expected}")
    return check_text(text, what)


# explicit bidirectional embeddings, overrides and isolates: they make text display in
# another order than it is stored ("Trojan Source"); right-to-left scripts need none of
# them in a short name (U+200E/U+200F, the direction marks, stay allowed)
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def check_plain(text: str, what: str) -> str:
    """``text`` (a name or a tag) if it holds no control character, no bidirectional
    override (``BIDI_CONTROLS``: a name shown would read other than it is stored) and
    valid Unicode only; raises ``ValidationError`` naming ``what`` and the first such
    character otherwise."""
    for char in text:
        if unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS:
            raise ValidationError(
                f"{what} holds the control character U+{ord(char):04X}; names and tags are "
                "plain text"
            )
    return check_text(text, what)


def entity_key(name: str) -> str:
    """The normalised form entities are matched by: Unicode NFKC, lower case, single spaces.

    NFKC rather than NFC: a key is only matched, never shown (the entity's ``name`` is), so
    folding compatibility variants costs nothing a reader sees, and "Ａｎｎ" (full width),
    "ﬁona" (a ligature) and a composed or decomposed "café" are each one entity. The
    embedded store rewrote the keys it held before to this form (schema migration 9), the
    ArangoDB store's ``init`` does (``store/arango/entity_keys.py``)."""
    folded = unicodedata.normalize("NFKC", name).lower()
    # lower() can leave a string that is no longer NFKC (a few title-case letters)
    return " ".join(unicodedata.normalize("NFKC", folded).split())


def check_tags(tags: Iterable[object] | None) -> tuple[str, ...]:
    """Tags as stored: stripped, first occurrence kept, at most ``MAX_TAGS``.

    Raises:
        ValidationError: ``tags`` is not a list or tuple of non-empty strings of at
            most ``MAX_LABEL`` characters, or holds more than ``MAX_TAGS`` distinct tags.
    """
    if tags is None:
        return ()
    if isinstance(tags, str):
        raise ValidationError("tags must be a list of strings, not one string")
    if not isinstance(tags, list | tuple):
        # A dict would give its keys and a set an order that changes between runs
        # (stored bytes must not): only an ordered sequence says what the caller meant.
        raise ValidationError(f"tags must be a list of strings, not {type(tags).__name__}")
    out: list[str] = []
    seen: set[str] = set()  # not ``in out``: a 1 MB body of tags made that quadratic
    for tag in tags:
        if not isinstance(tag, str) or all(map(invisible, tag)) or len(tag) > MAX_LABEL:
            raise ValidationError(f"tag {shown(tag)}: a non-empty string of <= {MAX_LABEL} chars")
        check_plain(tag, "a tag")
        tag = unicodedata.normalize("NFC", tag.strip())  # one tag, however it was composed
        if tag not in seen:
            seen.add(tag)
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise ValidationError(f"at most {MAX_TAGS} tags per memory")
    return tuple(out)


MAX_PROBLEMS = 5  # problems of a refused record named in its message; the first say what to fix


def problem_sentences(errors: Sequence[Mapping[str, Any]], limit: int) -> str:
    """Pydantic's errors as ``field: what is wrong`` sentences: the message of every refused
    request (REST's 422 ``invalid arguments for ...``) and record (a turn, a key entry, a
    retention policy, an export row), one form for all.

    Of the first ``limit`` errors, each field is named once, with its first error; the field
    is the top-level name the caller sent (``tags``, not ``tags.3`` or pydantic's union
    branch names), an error of the whole record has no field. ``; and N more problems``
    counts the errors not shown. Raises nothing.
    """
    shown = errors[:limit]
    said: dict[str, str] = {}
    for error in shown:
        loc = error.get("loc") or ()
        said.setdefault(str(loc[0]) if loc else "", str(error.get("msg", "invalid")))
    more = len(errors) - len(shown)
    text = "; ".join(f"{field}: {msg}" if field else msg for field, msg in said.items())
    return text + (f"; and {more} more problems" if more else "")


def model_problems(exc: Exception, limit: int = MAX_PROBLEMS) -> str:
    """A refused record's problems as ``problem_sentences`` says them. Pydantic's own text
    ends each problem with a documentation link and echoes the input, which may be a whole
    turn of text or a key's hash: neither tells a caller what to fix, so neither is shown
    (nor is the input in ``problem_sentences``). Raises nothing."""
    errors = getattr(exc, "errors", None)
    found = errors(include_url=False, include_input=False) if callable(errors) else []
    if not found:
        return str(exc).splitlines()[0][:200]
    return problem_sentences(found, limit)


def check_confidence(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        raise ValidationError("confidence must be a number between 0 and 1")
    if not 0 <= value <= 1:  # not float(value) first: an int past a float's range overflows
        raise ValidationError(f"confidence {shown(value)} is outside [0, 1]")
    return float(value)


def check_metadata(value: object) -> dict[str, Any]:
    """Metadata as JSON gives it back: at most ``MAX_METADATA_DEPTH`` levels and
    ``MAX_METADATA_BYTES`` of UTF-8 JSON, valid text only (no lone surrogate), integers
    within signed 64 bits, string keys (``_check_tree``). Raises ``ValidationError``
    otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("metadata must be a JSON object (a dict with string keys)")
    _check_tree(value, MAX_METADATA_DEPTH, "metadata")
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"metadata is not JSON-serialisable: {exc}") from exc
    size = len(check_text(text, "metadata").encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"metadata is {size} bytes as JSON, over the limit of {MAX_METADATA_BYTES}; "
            "keep large documents elsewhere and store a reference",
            limit=MAX_METADATA_BYTES,
        )
    return dict(json.loads(text))


# the integers every store keeps exactly: ArangoDB's VelocyPack holds 64 bits and reads a
# larger JSON integer as a double (or refuses it), where SQLite's JSON text keeps any
INT64 = (-(2**63), 2**63 - 1)


def _check_tree(value: object, limit: int, what: str) -> None:
    """Refuses containers nested deeper than ``limit`` and integers outside ``INT64`` (a
    number one backend would keep and another change), walked without recursion, and
    more values than ``MAX_METADATA_BYTES`` (each takes a byte of JSON at least): a
    caller's tree may share one list many times over (``x = [x] * 10`` ten times is 10**10
    values in a few objects, as is a YAML file's aliases), which the walk and
    ``json.dumps`` would expand, minutes of work and gigabytes, before a size is known."""
    stack: list[tuple[object, int]] = [(value, 1)]
    values = 0
    while stack:
        item, depth = stack.pop()
        values += 1
        if values > MAX_METADATA_BYTES:
            raise ValidationError(
                f"{what} holds over {MAX_METADATA_BYTES} values, more than its limit of "
                f"{MAX_METADATA_BYTES} bytes as JSON; keep large documents elsewhere and "
                "store a reference",
                limit=MAX_METADATA_BYTES,
            )
        if isinstance(item, int) and not isinstance(item, bool):
            if not INT64[0] <= item <= INT64[1]:
                raise ValidationError(
                    f"{what} holds an integer beyond 64 bits, which not every store keeps "
                    "exactly; send it as a string"
                )
        elif isinstance(item, dict | list | tuple):
            if depth > limit:
                raise ValidationError(f"{what} nests deeper than {limit} levels; flatten it")
            if isinstance(item, dict) and not all(isinstance(key, str) for key in item):
                # JSON would write 1, True and None as "1", "true", "null" (and drop one
                # of {1: a, "1": b}): a key the caller did not write
                key = next(key for key in item if not isinstance(key, str))
                raise ValidationError(
                    f"{what} keys must be strings, not {type(key).__name__} ({shown(key)})"
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def check_window(window: tuple[TimeInput, TimeInput] | None) -> tuple[int, int] | None:
    if window is None:
        return None
    if not isinstance(window, tuple | list) or len(window) != 2:
        raise ValidationError("time_window must be a (start, end) pair")
    start = parse_time(window[0], field="time_window start")
    end = parse_time(window[1], field="time_window end")
    if end <= start:
        raise ValidationError("time_window end must be after its start")
    return start, end


def check_id(value: object, name: str = "memory_id") -> str:
    """An id argument: a non-empty string."""
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{name} must be a non-empty string")
    return value


def check_offset(value: object, field: str = "offset") -> int:
    """A position to start after: a non-negative int (a bool or a float is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{field} must be a non-negative integer, got {shown(value)}")
    return value


def check_interval(
    valid_from: TimeInput | None, valid_until: TimeInput | None
) -> tuple[int | None, int | None]:
    """A fact's event interval in microseconds (None: not given); the end after the start."""
    start = None if valid_from is None else parse_time(valid_from, field="valid_from")
    end = None if valid_until is None else parse_time(valid_until, field="valid_until")
    if start is not None and end is not None and end <= start:
        raise ValidationError("valid_until must be after valid_from")
    return start, end


def check_limit(value: object, *, maximum: int = 10_000, name: str = "limit") -> int:
    """``value`` if it is an int (not a bool) from 1 to ``maximum``; raises
    ``ValidationError`` naming the parameter ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise ValidationError(f"{name} must be an integer from 1 to {maximum}")
    return value


INTEGER_TEXT = re.compile(r"-?[0-9]+")


def int_from_text(text: str, what: str) -> int:
    """An integer written as text (a query string, a header, a flag, a variable): ASCII
    digits with an optional leading '-'; the callee checks the range.

    Python's ``int`` also reads ``1_0`` (10), ``+1``, `` 7 `` and other scripts' digits
    (``٣``): text that is one number to us and another, or none, to a proxy, a log reader
    or a second client. Raises ``ValidationError`` naming ``what`` for any other text.
    """
    if not isinstance(text, str) or not INTEGER_TEXT.fullmatch(text):
        raise ValidationError(
            f"{what} must be a whole number in plain digits (e.g. 10 or -1), got {text!r:.60}"
        )
    try:
        return int(text)
    except ValueError:  # more digits than Python reads (4300)
        raise ValidationError(f"{what} has too many digits to be a number here") from None


def number_from_text(text: str, what: str) -> int | float:
    """A number written as text: ``int_from_text``'s digits with an optional fraction
    (``2.5``); no exponent, ``nan``, ``inf``, sign '+' or '_'. An int when it has no
    fraction. Raises ``ValidationError`` naming ``what`` otherwise."""
    if not isinstance(text, str) or not DECIMAL_TEXT.fullmatch(text):
        raise ValidationError(
            f"{what} must be a number in plain digits (e.g. 2 or 0.5), got {text!r:.60}"
        )
    return int_from_text(text, what) if "." not in text else finite_number(text, what)


# the words pydantic reads as booleans in a config file, so a variable or a header and a
# YAML setting agree
TRUE_WORDS = frozenset({"1", "true", "yes", "on", "t", "y"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", "f", "n"})


def check_flag(value: object, what: str) -> bool:
    """A yes/no argument of the library: ``True`` or ``False`` only. Python reads any value
    as a truth (``"false"`` and ``"no"`` are true), so a flag taken from text would do what
    its text does not say. Raises ``ValidationError`` naming ``what`` for anything else."""
    if not isinstance(value, bool):
        raise ValidationError(f"{what} must be true or false (a bool), got {shown(value, 40)}")
    return value


def flag_from_text(text: str | None, what: str) -> bool:
    """A yes/no setting written as text (a header, a variable): ``TRUE_WORDS`` or
    ``FALSE_WORDS`` in any case; absent or blank is no. Any other word is refused: a
    switch that narrows access (read-only) must not fall open on a word we do not know.
    Raises ``ValidationError`` naming ``what``."""
    word = (text or "").strip().lower()
    if not word or word in FALSE_WORDS:
        return False
    if word in TRUE_WORDS:
        return True
    raise ValidationError(f"{what} must be true or false (1/0, yes/no, on/off), got {text!r:.40}")
