"""Adversarial finding (session 26): MCP over stdio answered three kinds of bad request with
words that say nothing to fix. A tool call (any request but ping) before ``initialize`` got
"Invalid request parameters" with empty data, the words of a malformed argument, so a
client that skipped the handshake hunted for a wrong argument; ``tools/call`` without
``name``, with ``arguments`` a list, or ``tools/list`` with a numeric cursor got the same
words without the parameter's name; ``prompts/get`` of an unknown prompt got error code 0
(no JSON-RPC code; an unknown resource gets -32602) and logged a traceback as for a crash,
and so did ``prompts/get`` of a known prompt without an argument it requires.

Raw JSON-RPC lines to the real ``attestor-arango mcp`` process, and bodies to MCP over
HTTP: each is answered with -32602 and a message naming what to fix (never the value
sent), the server keeps serving, stores nothing, and logs no traceback.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
from attack_support import AUTH, acme_ring, seeded, stored
from interface_support import PYTHON, cli_env
from starlette.testclient import TestClient

from attestor_arango.interfaces.mcp_http import create_mcp_app

ANSWER_WITHIN_S = 60  # a hang fails the test instead of blocking the suite
SECRET = "sk-never-shown-4f1d"  # a value a client sent, which no answer may echo
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "attack", "version": "1"},
}


class _Raw:
    """The `mcp` command over stdio, driven one JSON-RPC line at a time."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(home),
            cwd=home,
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = self.answers.get(timeout=ANSWER_WITHIN_S)
        assert answer.get("id") == request_id, answer
        return answer

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=ANSWER_WITHIN_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.stderr.read().decode("utf-8", "replace")


def _refusal(answer: dict[str, Any], *words: str) -> str:
    error = answer.get("error")
    assert error is not None, answer
    assert error["code"] == types.INVALID_PARAMS, answer
    message = str(error["message"])
    assert message != "Invalid request parameters", answer
    for word in words:
        assert word in message, (word, answer)
    assert SECRET not in json.dumps(answer), answer
    return message


def test_bare_refusals_say_what_to_fix(tmp_path: Path) -> None:
    server = _Raw(tmp_path)
    try:
        call = {"name": "memory_add", "arguments": {"content": SECRET}}
        _refusal(server.ask(1, "tools/call", call), "initialize")
        _refusal(server.ask(2, "tools/list"), "initialize")
        assert server.ask(3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert "result" in server.ask(4, "initialize", INIT)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        _refusal(server.ask(5, "tools/call", {"arguments": {"content": SECRET}}), "name")
        _refusal(server.ask(6, "tools/call", {"name": "memory_add", "arguments": [SECRET]}),
                 "arguments")  # fmt: skip
        _refusal(server.ask(7, "tools/call", {"name": "memory_add", "arguments": SECRET}),
                 "arguments")  # fmt: skip
        _refusal(server.ask(8, "tools/list", {"cursor": 12}), "cursor")
        message = _refusal(server.ask(9, "prompts/get", {"name": SECRET[:5]}), "recall")
        assert json.loads(message)["code"] == "invalid_input" and "unknown prompt" in message
        message = _refusal(server.ask(10, "prompts/get", {"name": "recall"}), "question")
        assert json.loads(message)["details"] == {"prompt": "recall"}
        _refusal(server.ask(11, "prompts/get", {"name": "recall", "arguments": SECRET}),
                 "arguments")  # fmt: skip

        known = server.ask(12, "prompts/get", {"name": "recall", "arguments": {"question": "q"}})
        assert "result" in known, known
        stats = server.ask(13, "tools/call", {"name": "memory_stats", "arguments": {}})
        assert json.loads(stats["result"]["content"][0]["text"])["total"] == 0
    finally:
        log = server.close()
    assert "Traceback" not in log and "ValueError" not in log, log[-2000:]


HTTP_HEADERS = {
    **AUTH,
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}


def test_mcp_over_http_says_the_same(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    cases: list[tuple[str, Any, str]] = [
        ("tools/call", {"arguments": {"content": SECRET}}, "name"),
        ("tools/call", {"name": "memory_add", "arguments": [SECRET]}, "arguments"),
        ("tools/list", {"cursor": 12}, "cursor"),
        ("prompts/get", {"name": "nope"}, "unknown prompt"),
        ("prompts/get", {"name": "recall"}, "question"),
    ]
    with TestClient(create_mcp_app(mem, acme_ring()), base_url="http://127.0.0.1:8000") as client:
        for n, (method, params, word) in enumerate(cases):
            body = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
            answer = client.post("/mcp", json=body, headers=HTTP_HEADERS)
            assert answer.status_code == 200, answer.text
            _refusal(answer.json(), word)
    assert stored(mem) == before
    mem.close()
