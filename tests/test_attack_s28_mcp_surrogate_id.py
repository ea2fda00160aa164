"""Session 28 attack: one request whose id held a lone surrogate stopped the MCP stdio server.

``{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}`` is JSON (the escape reads as
one UTF-16 half), so the screen in front of the SDK (``mcp_stdio.screen``) answered it
with an error carrying that id; the SDK's writer could not encode the answer as UTF-8
(``PydanticSerializationError: surrogates not allowed``), its task group failed and the
server process exited: every later request of the client went unanswered. An id that is
not valid Unicode is now no id: the error is answered with a null id, as for any other
unreadable id, and the server answers the next request.
"""

from __future__ import annotations

import json
import select
import subprocess
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from test_mcp_stdio import params

from attestor_arango.interfaces.mcp_stdio import screen

ANSWER_WITHIN_S = 60  # a dead or silent server fails the test instead of blocking the suite
SURROGATE_ID = {
    "a request otherwise fine": '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
    "a low half": '{"jsonrpc": "2.0", "id": "a\\udfffb", "method": "ping"}',
    "surrogate arguments too": '{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/call", '
    '"params": {"name": "memory_add", "arguments": {"content": "\\udc00"}}}',
    "nested too deep": '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping", "params": '
    + '{"a": ' * 80
    + "1"
    + "}" * 81,
    "a number too long": '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping", "params": '
    + '{"a": 1'
    + "0" * 5000
    + "}}",
}


@pytest.mark.parametrize("case", list(SURROGATE_ID))
def test_the_answer_to_a_surrogate_id_can_be_written(case: str) -> None:
    answer = screen(SURROGATE_ID[case])

    assert isinstance(answer, types.JSONRPCError)
    assert answer.id is None
    written = answer.model_dump_json(by_alias=True, exclude_unset=True)  # as the SDK writes it
    assert json.loads(written)["error"]["message"]


def _lines_until(process: subprocess.Popen[str], wanted: Any) -> list[dict[str, Any]]:
    """Answers read until one with id ``wanted`` (or the server's end, or the guard)."""
    assert process.stdout is not None
    answers: list[dict[str, Any]] = []
    while True:
        ready, _, _ = select.select([process.stdout], [], [], ANSWER_WITHIN_S)
        if not ready:
            return answers
        line = process.stdout.readline()
        if not line:
            return answers
        answers.append(json.loads(line))
        if answers[-1].get("id") == wanted:
            return answers


def test_the_stdio_server_answers_a_surrogate_id_and_keeps_serving(tmp_path: Path) -> None:
    server = params(tmp_path)
    process = subprocess.Popen(
        [server.command, *server.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server.env,
        text=True,
    )
    assert process.stdin is not None and process.stderr is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                        "params": hello}) + "\n")  # fmt: skip
        process.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        process.stdin.write(SURROGATE_ID["a request otherwise fine"] + "\n")
        process.stdin.write('{"jsonrpc": "2.0", "id": 7, "method": "ping"}\n')
        process.stdin.flush()

        answers = _lines_until(process, 7)
    finally:
        process.stdin.close()
        process.wait(ANSWER_WITHIN_S)
    errors = process.stderr.read()
    process.stderr.close()
    process.stdout.close()  # type: ignore[union-attr]

    assert [a.get("id") for a in answers] == [0, None, 7], errors[-2000:]
    assert "surrogate" in answers[1]["error"]["message"]
    assert answers[2]["result"] == {}
