"""Adversarial finding: a NUL or an escape sequence was stored inside a name or a tag.

``content`` refused a NUL, but ``entity="a\\x00b"`` was stored as is (a name that prints
as "ab" yet never matches "ab"), and ``category="\\x1b[31mred"`` kept a terminal escape
that the CLI's tables and any log would obey. A name (entity, category, the id a memory
cites) and a tag are now refused with a control character in them, through the library,
REST and MCP alike, and nothing is stored. Whitespace inside a name is still collapsed,
and other scripts (right-to-left ones too) are names like any other; a bidirectional
override or isolate (U+202A-E, U+2066-9), which makes a name display in another order
than it is stored, is refused like a control character.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.mcp import build_server

BAD: dict[str, dict[str, Any]] = {
    "NUL in an entity": {"entity": "a\x00b"},
    "escape in a category": {"category": "\x1b[31mred"},
    "bell in an entity": {"entity": "ann\x07"},
    "NUL in a tag": {"tags": ["geo\x00"]},
    "escape in a tag": {"tags": ["ok", "\x1b]0;title\x07"]},
    "DEL in a cited episode id": {"source_episode_id": "ep\x7f1"},
}


@pytest.mark.parametrize("case", list(BAD))
def test_the_library_refuses_a_control_character_in_a_name(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match="control character"):
        mem.add("Ann likes mint", context=CTX, **BAD[case])
    assert stored(mem) == before
    mem.close()


@pytest.mark.parametrize("case", list(BAD))
def test_rest_refuses_a_control_character_in_a_name(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    answer = client.post(
        "/v1/memories", json={"content": "Ann likes mint", **BAD[case]}, headers=AUTH
    )
    assert answer.status_code == 422, answer.text
    assert "control character" in answer.json()["message"]
    assert stored(mem) == before
    mem.close()


def test_mcp_refuses_a_control_character_in_a_name(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    before = stored(mem)

    async def refusals() -> list[dict[str, Any]]:
        found = []
        for args in ({"entity": "a\x00b"}, {"category": "\x1b[2J"}, {"tags": ["t\x00"]}):
            with pytest.raises(ToolError) as refused:
                await server.call_tool("memory_add", {"content": "Ann likes mint", **args})
            text = str(refused.value)
            found.append(json.loads(text[text.index("{") :]))
        return found

    for error in asyncio.run(refusals()):
        assert error["code"] == "invalid_input" and "control character" in error["message"]
    assert stored(mem) == before
    mem.close()


def test_names_in_any_script_and_with_spaces_are_still_names(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    rtl = mem.add("Dana likes tea", entity="\u05d3\u05e0\u05d4", category="drink", context=CTX)
    assert rtl.entity == "\u05d3\u05e0\u05d4"
    spaced = mem.add("Eve likes tea", entity=" Eve\t Smith\n", tags=[" geo "], context=CTX)
    assert spaced.entity == "Eve Smith" and spaced.tags == ("geo",)
    mem.close()


BIDI = ["\u202eann", "ann\u202d", "a\u202ab", "\u2066ann\u2069", "\u2067x", "\u2068x", "x\u202b"]


@pytest.mark.parametrize("name", BIDI)
def test_a_bidirectional_override_in_a_name_is_refused(tmp_path: Path, name: str) -> None:
    """U+202A-E and U+2066-9 make a name display in another order than it is stored
    ("Trojan Source"): "\\u202eann" shows as "nna". Refused as a control character."""
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    for fields in ({"entity": name}, {"category": name}, {"tags": [name]}):
        with pytest.raises(ValidationError, match="control character U\\+20"):
            mem.add("Ann likes mint", context=CTX, **fields)
    assert stored(mem) == before
    marks = mem.add("Dana likes tea", entity="\u05d3\u05e0\u05d4\u200f", context=CTX)
    assert marks.entity == "\u05d3\u05e0\u05d4\u200f"  # a direction mark is still a name
    mem.close()
