"""MCP over stdio answers every request (issue 16, finding 12), through the official SDK
client against the real `attestor-arango mcp` subprocess: a lone surrogate in a string and
very deep JSON nesting get a JSON-RPC error (or an MCP error result) within a timeout, and
the server keeps serving afterwards with nothing stored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from test_mcp_stdio import params, text_of

PLACEHOLDER = "@@RAW-VALUE@@"
ANSWER_WITHIN_S = 60  # a hang fails the test instead of blocking the suite


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": value}
    return value


class _RawWriter:
    """The client's write stream, with one string of the request replaced by raw JSON text
    the SDK itself cannot serialise (a lone surrogate escape, 100k nested objects), the way
    any other client could send it."""

    def __init__(self, inner: Any, raw: str) -> None:
        self._inner = inner
        self._raw = raw

    async def send(self, item: SessionMessage) -> None:
        raw = self._raw
        message = item.message
        if isinstance(message, types.JSONRPCRequest):

            class _Raw(types.JSONRPCRequest):
                def model_dump_json(self, **kwargs: Any) -> str:
                    text = super().model_dump_json(**kwargs)
                    return text.replace(f'"{PLACEHOLDER}"', raw)

            message = _Raw.model_validate(message.model_dump(by_alias=True, exclude_unset=True))
            item = SessionMessage(message, metadata=item.metadata)
        await self._inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _RawWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.aclose()


CASES = {
    "lone surrogate in content": ('"bad \\ud800 text"', {"content": PLACEHOLDER}),
    "lone low surrogate in a tag": ('"\\udfff"', {"content": "fine", "tags": [PLACEHOLDER]}),
    "100k nested objects": ('{"a":' * 100_000 + "1" + "}" * 100_000, {"content": PLACEHOLDER}),
    "100k nested arrays": ("[" * 100_000 + "]" * 100_000, {"content": PLACEHOLDER}),
}


async def _answer(home: Path, raw: str | None, arguments: dict[str, Any]) -> tuple[str, int]:
    """What the server answers to one memory_add; then the count it still reports."""
    async with stdio_client(params(home)) as (read, write):
        writer = write if raw is None else _RawWriter(write, raw)
        async with ClientSession(read, writer) as session:  # type: ignore[arg-type]
            with anyio.fail_after(ANSWER_WITHIN_S):
                await session.initialize()
                try:
                    result = await session.call_tool("memory_add", arguments)
                except MCPError as exc:
                    answer = f"jsonrpc-error {exc.error.code}: {exc.error.message}"
                else:
                    assert result.is_error, text_of(result)
                    answer = f"tool-error: {text_of(result)}"
                stats = await session.call_tool("memory_stats", {})
    assert not stats.is_error, text_of(stats)
    return answer, int(json.loads(text_of(stats))["total"])


@pytest.mark.parametrize("case", list(CASES))
def test_every_malformed_request_gets_an_answer(tmp_path: Path, case: str) -> None:
    raw, arguments = CASES[case]
    answer, total = asyncio.run(_answer(tmp_path, raw, arguments))
    assert total == 0, (case, answer)
    assert "surrogate" in answer or "nest" in answer, answer


def test_nesting_the_sdk_itself_sends_gets_an_answer(tmp_path: Path) -> None:
    """220 levels: the SDK client serialises it; the server's JSON reader refuses it."""
    answer, total = asyncio.run(_answer(tmp_path, None, {"content": _deep(220)}))
    assert total == 0 and answer, answer


def test_a_surrogate_pair_escape_is_still_stored(tmp_path: Path) -> None:
    """The screen refuses only what the SDK cannot read: an escaped pair is one character."""

    async def run() -> str:
        async with stdio_client(params(tmp_path)) as (read, write):
            writer = _RawWriter(write, '"smile \\ud83d\\ude00"')
            async with ClientSession(read, writer) as session:  # type: ignore[arg-type]
                with anyio.fail_after(ANSWER_WITHIN_S):
                    await session.initialize()
                    result = await session.call_tool("memory_add", {"content": PLACEHOLDER})
        assert not result.is_error, text_of(result)
        return str(json.loads(text_of(result))["content"])

    assert asyncio.run(run()) == "smile \U0001f600"
