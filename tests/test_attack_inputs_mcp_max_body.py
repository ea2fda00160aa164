"""Adversarial finding: ``mcp --transport http`` had no ``--max-body``.

The REST server's ``api --max-body`` sets how large a request body may be; MCP over HTTP
always used the 1 MiB default, so an operator could neither lower it for a small box nor
raise it for large documents. ``mcp`` now takes ``--max-body`` as ``api`` does (a whole
number of at least 1, else a usage error, exit 2) and hands it to the MCP app, which
answers a larger body 413 before reading it whole and stores nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from attack_support import CTX, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.cli import server
from attestor_arango.interfaces.cli.main import build_parser, main
from attestor_arango.interfaces.cli.parsing import UsageError

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}


def _call(content: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "memory_add", "arguments": {"content": content}}}  # fmt: skip
    return json.dumps(message).encode()


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "many"])
def test_a_max_body_that_is_no_positive_whole_number_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "--transport", "http", "--no-auth", "--max-body", value]
    with pytest.raises(UsageError, match="argument --max-body"):
        build_parser().parse_args(argv)
    assert main(argv) == 2
    assert "argument --max-body" in capsys.readouterr().err


def test_mcp_over_http_serves_with_the_max_body_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.default_context = CTX
    before = stored(mem)
    seen: dict[str, Any] = {}

    def run(app: Any, **options: Any) -> None:  # instead of serving: ask the app
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            seen["big"] = client.post("/mcp", content=_call("Ann likes " + "x" * 2_000),
                                      headers=HEADERS)  # fmt: skip
            seen["stored"] = stored(mem)
            seen["small"] = client.post("/mcp", content=_call("Ann likes mint"), headers=HEADERS)

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.setattr(server, "open_memory", lambda args: mem)
    monkeypatch.setattr(server, "settle_heap", lambda: None)  # process-wide: not in pytest
    args = build_parser().parse_args(
        ["mcp", "--transport", "http", "--no-auth", "--max-body", "1000"]
    )
    assert isinstance(args, argparse.Namespace) and args.max_body == 1000
    assert args.func(args) == 0
    assert seen["big"].status_code == 413, seen["big"].text
    assert seen["big"].json()["code"] == "payload_too_large"
    assert seen["stored"] == before
    assert seen["small"].status_code == 200 and "Ann likes mint" in seen["small"].text


def test_max_body_defaults_to_the_rest_servers() -> None:
    mcp = build_parser().parse_args(["mcp", "--transport", "http"])
    api = build_parser().parse_args(["api"])
    assert mcp.max_body == api.max_body == 1_048_576
