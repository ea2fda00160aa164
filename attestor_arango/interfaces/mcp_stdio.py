"""The MCP server's stdio transport: the SDK's, with every line screened before it.

The SDK's stdio reader hands a line its JSON reader refuses (nesting deeper than about
200 levels, a lone UTF-16 surrogate escape such as ``"\\ud800"``) to the session as an
exception, which answers nothing: the client waits for ever. Here each line is read
first; one the SDK cannot read is answered at once with a JSON-RPC error carrying the
request's id (found by a linear scan that never recurses), saying what to fix; so is a
line whose object gives a key twice, which the SDK would read as its last value, and
one whose id is no JSON-RPC id (``true``, ``1.5``, an object: the SDK would take it for
an unanswered notification). Lines the SDK can read pass through unchanged.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from attestor_arango.errors import ValidationError
from attestor_arango.jsontext import load_json

MAX_DEPTH = 64  # nesting a request may have; tool arguments are flat or nearly so

# JSON text between brackets: strings (with escapes) are skipped whole, brackets counted
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
# an integer id (not the digits before a fraction or exponent: "1e400" is no id 1) or text
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+(?![\d.eE])|"(?:[^"\\]|\\.)*")')

RequestId = int | str | None


def _scan(line: str) -> tuple[int, RequestId]:
    """The deepest nesting of ``line`` and the id of its top-level object, if any."""
    depth = deepest = 0
    found: RequestId = None
    for match in _TOKENS.finditer(line):
        token = match.group()
        if token in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "}]":
            depth -= 1
        elif depth == 1 and found is None and token == '"id"':
            value = _ID_VALUE.match(line, match.end())
            if value is not None:
                found = _id_of(value.group(1))
    return deepest, found


def _id_of(text: str) -> RequestId:
    """The id an answer may carry: an integer, or text the answer can be written in (a
    lone surrogate such as ``"\\ud800"`` cannot be encoded as UTF-8, and the SDK's writer
    failing on it ends the server), else None."""
    try:
        value = load_json(text, "the request id")
    except ValidationError:
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def screen(line: str) -> types.JSONRPCError | None:
    """None for a line the SDK reads; else the JSON-RPC error that answers it."""
    if not line.strip():
        return None
    deepest, request_id = _scan(line)
    if deepest > MAX_DEPTH:
        return _error(
            request_id,
            types.INVALID_PARAMS,
            f"the request nests {deepest} levels deep; at most {MAX_DEPTH} levels are "
            "accepted: send flat arguments",
        )
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        return _explain(line, request_id, exc)
    try:  # the SDK keeps the last of two equal keys and reads NaN: we refuse both
        parsed = load_json(line, "the request")
    except ValidationError as err:
        return _refused(request_id, err)
    return _bad_id(parsed)


def _bad_id(parsed: object) -> types.JSONRPCError | None:
    """The error for a message whose ``id`` is no JSON-RPC id (MCP: a string or an integer,
    never null): the SDK reads ``"id": true``, ``1.5``, ``{}``, ``[]`` or ``null`` beside a
    method as a notification, which is never answered, so the client would wait for ever."""
    if not isinstance(parsed, dict) or "id" not in parsed:
        return None
    value = parsed["id"]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return None
    shown = json.dumps(value)
    return _error(
        None,
        types.INVALID_REQUEST,
        f"the request id {shown[:40]} is no JSON-RPC id: send a string or an integer "
        "(null, true/false, fractions, objects and arrays are refused), or leave id out "
        "for a notification",
    )


def _explain(line: str, request_id: RequestId, exc: ValueError) -> types.JSONRPCError:
    try:
        parsed = load_json(line, "the request")
    except ValidationError as err:
        return _refused(request_id, err)
    if isinstance(parsed, dict):
        request_id = _id_of(json.dumps(parsed.get("id")))
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _error(
            request_id,
            types.INVALID_PARAMS,
            "text with a lone UTF-16 surrogate cannot be stored; send valid Unicode "
            "(a surrogate escape such as \\ud800 must be half of a pair)",
        )
    return _error(request_id, types.INVALID_REQUEST, f"not a JSON-RPC message: {_problem(exc)}")


def _refused(request_id: RequestId, err: ValidationError) -> types.JSONRPCError:
    """``load_json``'s refusal as JSON-RPC: a key given twice is JSON with unclear params;
    anything else (NaN, 1e999, a syntax error) is no JSON at all."""
    code = types.INVALID_PARAMS if "key" in err.details else types.PARSE_ERROR
    return _error(request_id, code, err.message)


def _problem(exc: ValueError) -> str:
    """The first thing pydantic found wrong, e.g. "method: Field required" (its text's last
    line is only a link to its documentation)."""
    errors = getattr(exc, "errors", None)
    found = errors(include_url=False) if callable(errors) else []
    if not found:
        return str(exc).splitlines()[0][:200]
    where = ".".join(str(part) for part in found[0]["loc"][1:])
    return ((f"{where}: " if where else "") + str(found[0]["msg"]))[:200]


def _error(request_id: RequestId, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


async def serve(server: Any) -> None:
    """Runs ``server`` (an ``MCPServer``) on stdin/stdout until the client closes stdin."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs
    stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    ready = anyio.Event()
    writer: list[Any] = []

    async def lines() -> AsyncIterator[str]:
        async for line in stdin:
            error = screen(line)
            if error is None:
                yield line
                continue
            await ready.wait()
            await writer[0].send(SessionMessage(error))

    async with stdio_server(stdin=cast(Any, lines())) as (read_stream, write_stream):
        writer.append(write_stream)
        ready.set()
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
