"""The MCP tools' argument types: each with a description and the bounds AgentMemory enforces.

A model reads these in ``tools/list``: every field says what it means, its form and
its limits, so a call is right the first time. The bounds mirror
``attestor_arango.validation`` (AgentMemory still checks everything itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import Field

from attestor_arango.scope import NAME_RE
from attestor_arango.validation import MAX_LABEL, MAX_TAGS

# a timestamp with a zone, or a bare date (its UTC midnight, as ``clock.parse_time``, REST and
# the CLI read it, and as Attestor's README writes a window: ("2026-02-01", "2026-04-01"))
ISO = r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$"
NAME_PATTERN = NAME_RE.pattern

Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4000,
        description="What to look for, in natural language or keywords (not empty).",
    ),
]
MemoryId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        description="A memory id exactly as returned by memory_add, memory_recall or "
        "memory_search (the 'id' field).",
    ),
]
Timestamp = Annotated[
    str,
    Field(
        pattern=ISO,
        description="ISO-8601 timestamp with a time zone, e.g. 2026-03-01T00:00:00Z, "
        "or a date (its midnight UTC), e.g. 2026-03-01.",
    ),
]
AsOf = Annotated[
    Timestamp | None,
    Field(
        description="Read what was believed at this past moment (ISO-8601 with Z); omit for now.",
    ),
]
TimeWindow = Annotated[
    list[Timestamp] | None,
    Field(
        min_length=2,
        max_length=2,
        description="[start, end]: only facts valid at some point in this interval "
        "(two ISO-8601 timestamps with Z, start before end); omit for any time.",
    ),
]
TokenBudget = Annotated[
    int | None,
    Field(
        gt=0,
        le=1_000_000,
        description="Most tokens of memory text to return; omit for the caller's budget.",
    ),
]
Limit = Annotated[
    int,
    Field(ge=1, le=1000, description="Most memories to return (1-1000)."),
]
Entity = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_LABEL,
        description="Who or what the fact is about, e.g. 'Alice' or 'project-x'. A new fact "
        "with the same entity and category supersedes the old one.",
    ),
]
Category = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_LABEL,
        description="The kind of fact, e.g. 'city', 'preference', 'decision'.",
    ),
]
Namespace = Annotated[
    str | None,
    Field(
        pattern=NAME_PATTERN,
        description="Search this namespace of your tenant instead of your own (your key "
        "must allow it); omit for your own namespace.",
    ),
]
Status = Annotated[
    str | None,
    Field(
        pattern="^(active|superseded|archived|all)$",
        description="'active' (default), 'superseded', 'archived' or 'all' (history too).",
    ),
]
Tags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_LABEL)]] | None,
    Field(max_length=MAX_TAGS, description="Short labels for filtering, e.g. ['geo']."),
]
Content = Annotated[
    str,
    Field(
        min_length=1,
        description="The fact, as one short self-contained sentence (e.g. 'Alice lives in Lyon').",
    ),
]
Confidence = Annotated[
    float,
    Field(ge=0.0, le=1.0, description="How sure the source is, 0 to 1 (default 1)."),
]
ValidFrom = Annotated[
    Timestamp | None,
    Field(description="When the fact became true in the world (ISO-8601 with Z); omit for now."),
]
ValidUntil = Annotated[
    Timestamp | None,
    Field(description="When the fact stops being true (ISO-8601 with Z); omit for open-ended."),
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(description="Extra JSON fields kept with the fact, e.g. {'source': 'chat'}."),
]
Reason = Annotated[
    str | None,
    Field(max_length=1000, description="Why the memory is closed; kept in the audit log."),
]
TimelineEntity = Annotated[
    str,
    Field(min_length=1, max_length=MAX_LABEL, description="The entity whose history to return."),
]

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
FORGET = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)


MAX_NAMED = 20  # unknown arguments an answer names (REST's codec.MAX_ERRORS likewise)


def loose_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """What the SDK's lax validation would let through silently, in a sentence (or "").

    An argument the tool does not have is dropped by the SDK (a misspelt ``as_of`` would
    read the present), and a value of another JSON type than the schema's is converted:
    ``true`` read as 1 for a number, ``"5"`` or ``5.0`` as the integer 5, ``"0.5"`` as a
    confidence, the text ``'{"a": 1}'`` as an object. REST refuses each, so MCP does too.
    """
    props: Mapping[str, Any] = schema.get("properties") or {}
    unknown = sorted(name for name in arguments if name not in props)
    if unknown:
        takes = f"its arguments are {', '.join(sorted(props))}" if props else "it takes none"
        named = ", ".join(repr(name[:64]) for name in unknown[:MAX_NAMED])
        if len(unknown) > MAX_NAMED:  # a call of 80,000 keys is not answered with all of them
            named += f" and {len(unknown) - MAX_NAMED} more"
        return f"{tool} has no argument {named}; {takes}"
    for name, value in arguments.items():
        types = _types(props[name])
        kind = _json_type(value)
        if types and kind not in types and not (kind == "integer" and "number" in types):
            wanted = " or ".join(_WORDS.get(t, t) for t in sorted(types - {"null"} or types))
            return f"'{name}' must be {wanted}, not {_WORDS.get(kind, kind)}"
    return ""


def _json_type(value: Any) -> str:
    """The JSON Schema type of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "text",
    "boolean": "true/false",
    "array": "a list",
    "object": "an object",
}


def _types(prop: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema property admits (through anyOf / oneOf)."""
    found: set[str] = set()
    kind = prop.get("type")
    found.update([kind] if isinstance(kind, str) else kind or [])
    for key in ("anyOf", "oneOf"):
        for option in prop.get(key) or ():
            found |= _types(option)
    return found
