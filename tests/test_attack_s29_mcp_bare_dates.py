"""Session 29 attack: MCP refused the bare dates the library, REST and Attestor's README take.

Attestor's README reads a window as ``time_window=("2026-02-01", "2026-04-01")``; the
library reads a bare date as its UTC midnight (``clock.parse_time``), and REST and the CLI
take it. Over MCP the tools' time fields took only a full ISO-8601 timestamp with a zone:
``memory_recall(time_window=["2026-02-01", "2026-04-01"])`` and ``memory_get(as_of=
"2026-03-01")`` were refused as invalid input, so an agent host following the reference's
own example got an error from one surface only. A bare date is now taken over MCP as
everywhere else (the same answer as the library's), and anything else is still refused.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored
from mcp.server.mcpserver.exceptions import ToolError

from attestor_arango.interfaces.mcp import build_server


def _call(server: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's result as data, or the error result it answered, as data."""

    async def run() -> Any:
        try:
            result = await server.call_tool(tool, arguments)
        except ToolError as refused:
            text = str(refused)
            return {"refused": json.loads(text[text.index("{") :])}
        return result.structured_content

    return asyncio.run(run())


def test_a_window_of_bare_dates_recalls_as_the_library_does(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    server = build_server(mem, context=CTX)
    window = ["2020-01-01", "2999-01-01"]
    answer = _call(server, "memory_recall", {"query": "tea", "time_window": window})
    assert "refused" not in answer, answer
    library = mem.recall("tea", time_window=tuple(window), context=CTX)
    assert [r["memory"]["id"] for r in answer["results"]] == [r.memory.id for r in library.results]
    assert library.results


def test_a_bare_date_as_of_reads_that_midnight(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    server = build_server(mem, context=CTX)
    answer = _call(server, "memory_get", {"memory_id": ours, "as_of": "2020-01-01"})
    # the memory did not exist then: not found, as the library answers, not invalid input
    assert answer["refused"]["code"] == "not_found", answer


@pytest.mark.parametrize("bad", ["2026-1-01", "2026-01-01T", "20260101", "2026-01-01 junk"])
def test_other_text_is_still_refused_and_stores_nothing(tmp_path: Path, bad: str) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    server = build_server(mem, context=CTX)
    before = stored(mem)
    answer = _call(server, "memory_add", {"content": "Ann likes mint", "valid_from": bad})
    assert answer["refused"]["code"] == "invalid_input", answer
    assert stored(mem) == before
