"""Adversarial finding: an MCP prompt's refusal said only "Error rendering prompt recall".

The prompts ``recall`` and ``handoff`` read memory; a typed error there (no API key on a
keyed server, a name with a control character) was raised as a resource error, which
the SDK replaces inside a prompt by a bare "Error rendering prompt <name>": no code, no
word on what to send. Tools and resources carry the JSON ``{code, message, details}``;
prompts now do too (an ``MCPError`` whose message is that JSON), and nothing is stored.
An argument a prompt does not have (a misspelt one) was refused the same bare way; it is
now named.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored
from interface_support import keyring
from mcp.shared.exceptions import MCPError

from attestor_arango.interfaces.mcp import build_server


def _refusal(server: Any, prompt: str, arguments: dict[str, str]) -> dict[str, Any]:
    async def run() -> str:
        with pytest.raises(MCPError) as refused:
            await server.get_prompt(prompt, arguments)
        return refused.value.message

    return dict(json.loads(asyncio.run(run())))


@pytest.mark.parametrize(
    ("prompt", "arguments"),
    [("recall", {"question": "what does Ann drink?"}), ("handoff", {"to_agent": "b", "task": "t"})],
)
def test_a_keyless_prompt_call_is_refused_with_a_readable_code(
    tmp_path: Path, prompt: str, arguments: dict[str, str]
) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, keys=keyring()[0])
    before = stored(mem, with_audit=False)
    error = _refusal(server, prompt, arguments)
    assert error["code"] == "unauthenticated" and "API key" in error["message"]
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_a_handoff_about_a_name_with_a_control_character_says_why(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    before = stored(mem)
    error = _refusal(server, "handoff", {"to_agent": "b", "task": "t", "entity": "ann\x00"})
    assert error["code"] == "invalid_input" and "control character" in error["message"]
    assert stored(mem) == before
    mem.close()


def test_a_prompt_argument_the_prompt_does_not_have_is_named(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    before = stored(mem)
    error = _refusal(server, "recall", {"question": "tea?", "as_of": "2020-01-01T00:00:00Z"})
    assert error["code"] == "invalid_input" and "no argument 'as_of'" in error["message"]
    assert stored(mem) == before
    mem.close()
