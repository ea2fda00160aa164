"""MCP requests the SDK refuses with no reason, answered with one (stdio and HTTP alike).

The SDK answers three kinds of bad request in words that say nothing to fix:

- any request but ``ping`` before ``initialize``: "Invalid request parameters" (code
  -32602, data ``""``), the same words as a malformed request, so a client that skipped
  the handshake looks for a wrong argument;
- params of the wrong shape (``tools/call`` without ``name``, ``arguments`` a list or a
  string, ``cursor`` a number): the same words, without the parameter's name;
- ``prompts/get`` of a prompt it does not have, or without an argument the prompt
  requires: code 0 (no JSON-RPC code) and the exception's traceback in the server's log,
  as for a crash.

``RequestErrors`` (a server middleware: it wraps every request, validation included)
answers each with -32602 (invalid params) and says what was wrong: "send initialize
first", the parameter and what it should be (pydantic's location and message, never the
value sent); the prompts there are, or the arguments one needs, in the JSON ``{code,
message, details}`` the prompts' other refusals carry. Everything else passes through
untouched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.errors import ValidationError

SDK_WORDS = "Invalid request parameters"  # what the SDK answers for all of the above


class RequestErrors:
    """Server middleware: a reason for the SDK's bare refusals (see the module docstring)."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "prompts/get" and _gate_open(ctx):  # else the SDK's gate answers
            self._check_prompt(ctx.params)
        try:
            return await call_next(ctx)
        except PydanticValidationError as exc:
            raise MCPError(INVALID_PARAMS, f"{ctx.method}: {problem(exc)}", "") from None
        except MCPError as exc:
            error = exc.error
            bare = error.code == INVALID_PARAMS and error.message == SDK_WORDS and not error.data
            if bare and not _gate_open(ctx):
                raise MCPError(
                    INVALID_PARAMS,
                    f"{ctx.method} before initialize: send the initialize request (then the "
                    "notifications/initialized notification) first; only ping is answered "
                    "before it",
                    "",
                ) from None
            raise

    def _check_prompt(self, params: Any) -> None:
        """An unknown prompt, or one without an argument it requires, refused as invalid
        params saying what there is (a name or arguments of the wrong type are left to the
        SDK's validation, an argument the prompt does not take to ``_Server.get_prompt``)."""
        name = params.get("name") if isinstance(params, Mapping) else None
        if not isinstance(name, str):
            return
        prompts = {p.name: p for p in self._server._prompt_manager.list_prompts()}
        prompt = prompts.get(name)
        if prompt is None:
            shown = name if len(name) <= 80 else name[:80] + "..."
            _refuse(f"unknown prompt {shown!r}; the prompts are {', '.join(sorted(prompts))}")
        given = params.get("arguments") or {}
        if not isinstance(given, Mapping):  # the SDK's validation names it
            return
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in given]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            _refuse(
                f"prompt {name} needs the argument{plural} {', '.join(map(repr, missing))}", name
            )


def _gate_open(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the SDK serves requests on this connection: after ``initialize`` over stdio,
    at once over stateless HTTP (the connection's ``initialize_accepted``, which the
    session does not expose; taken as open if the SDK stops having it)."""
    connection = getattr(ctx.session, "_connection", None)
    return bool(getattr(connection, "initialize_accepted", True))


def _refuse(message: str, prompt: str | None = None) -> NoReturn:
    """A prompt's refusal as its other refusals are (``mcp._read``): invalid params whose
    message is the JSON ``{code, message, details}``."""
    details = {} if prompt is None else {"prompt": prompt}
    raise MCPError(INVALID_PARAMS, json.dumps(ValidationError(message, **details).to_dict()))


def problem(exc: PydanticValidationError) -> str:
    """The first thing pydantic found wrong, as "params.name: Field required" (its location
    and message: never the value sent, which may be anything the client holds)."""
    found = exc.errors(include_url=False, include_input=False)
    if not found:
        return "the params are not valid"
    where = ".".join(str(part) for part in found[0]["loc"])
    return (f"{where}: " if where else "") + str(found[0]["msg"])[:200]
