"""Adversarial finding: ``NaN``, ``Infinity`` and ``1e999`` were read as numbers.

Python's JSON reader takes ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON,
and reads ``1e999`` as infinity. A request holding one reached the argument checks as a
float no store, ranking or other JSON reader agrees on, and was refused (if at all) by
whichever check it met, with a message about something else ("confidence nan is outside
[0, 1]"). ``jsontext.load_json`` now refuses such a literal while it parses, naming it,
and every reader of outside JSON goes through it: a REST body (422 ``invalid_input``),
the CLI's ``--metadata`` and hook events, an MCP line over stdio or HTTP, a list cursor;
YAML documents (config, keys, policies, import files) refuse ``.nan``, ``.inf`` and a
float too large alike. Nothing is stored.
"""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from interface_support import PYTHON, cli_env
from starlette.testclient import TestClient

from attestor_arango.config import load_config
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.cli.hooks import last_exchange, run_hook
from attestor_arango.interfaces.mcp_http import create_mcp_app
from attestor_arango.interfaces.mcp_stdio import screen
from attestor_arango.jsontext import load_json

LITERALS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"]
BODIES = {
    "confidence": ("/v1/memories", '{"content": "Ann likes mint", "confidence": %s}'),
    "metadata": ("/v1/memories", '{"content": "Ann likes mint", "metadata": {"w": %s}}'),
    "as_of": ("/v1/memories/list", '{"as_of": %s}'),
    "inside a turn": ("/v1/ingest", '{"turn": {"user": "I like tea", "metadata": {"w": %s}}}'),
}


def _named(message: str, literal: str) -> bool:
    return literal in message and ("JSON does not allow" in message or "64-bit" in message)


@pytest.mark.parametrize("literal", LITERALS)
def test_load_json_refuses_a_non_finite_number_naming_it(literal: str) -> None:
    with pytest.raises(ValidationError) as refused:
        load_json(f'{{"limit": 1, "weight": {literal}}}', "request body")
    assert _named(refused.value.message, literal), refused.value.message
    assert load_json('{"w": 1.5e3, "s": "NaN"}', "request body") == {"w": 1500.0, "s": "NaN"}


@pytest.mark.parametrize("literal", LITERALS)
@pytest.mark.parametrize("case", list(BODIES))
def test_rest_refuses_a_non_finite_number_naming_it(
    tmp_path: Path, case: str, literal: str
) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    path, body = BODIES[case]
    before = stored(mem)
    headers = {**AUTH, "content-type": "application/json"}
    answer = client.post(path, content=(body % literal).encode(), headers=headers)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["code"] == "invalid_input" and _named(error["message"], literal), error
    assert stored(mem) == before
    mem.close()


def test_the_cli_refuses_metadata_holding_nan(tmp_path: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "add", "Ann likes mint",
         "--metadata", '{"w": NaN}', "--json"],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stderr)["error"]
    assert error["code"] == "invalid_input" and _named(error["message"], "NaN"), error


def test_a_hook_event_holding_infinity_is_refused(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    event = '{"tool_name": "Write", "tool_input": {"file_path": "/a", "size": Infinity}}'
    stdout, stderr = io.StringIO(), io.StringIO()
    assert run_hook("post-tool-use", mem, io.StringIO(event), stdout, stderr) == 1
    assert stdout.getvalue() == "" and _named(stderr.getvalue(), "Infinity")
    assert stored(mem) == before
    mem.close()


def test_a_transcript_line_holding_nan_is_skipped(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"message": {"role": "user", "content": "I like tea"}},
        {"message": {"role": "assistant", "content": "Noted."}},
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    text += '\n{"message": {"role": "user", "content": "I like rum", "w": NaN}}'
    transcript.write_text(text, encoding="utf-8")
    assert last_exchange(str(transcript)) == ("I like tea", "Noted.")


@pytest.mark.parametrize("literal", LITERALS)
def test_an_mcp_stdio_line_holding_a_non_finite_number_is_answered_with_an_error(
    literal: str,
) -> None:
    call = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_add",'
        f' "arguments": {{"content": "a fact", "confidence": {literal}}}}}}}'
    )
    answer = screen(call)
    assert isinstance(answer, types.JSONRPCError)
    assert answer.id == 7 and _named(answer.error.message, literal), answer.error
    assert screen(call.replace(literal, "0.5")) is None  # a finite number passes to the SDK
    # a line that is no JSON-RPC message and holds NaN is answered as not JSON
    other = screen(f'{{"id": 3, "hello": {literal}}}')
    assert isinstance(other, types.JSONRPCError) and other.id == 3
    assert other.error.code == types.PARSE_ERROR and _named(other.error.message, literal)


def test_mcp_over_http_refuses_a_body_holding_nan(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    headers = {
        **AUTH,
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-06-18",
    }
    call = (
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_add",'
        ' "arguments": {"content": "Ann likes mint", "metadata": {"w": NaN}}}}'
    )
    before = stored(mem)
    with TestClient(create_mcp_app(mem, acme_ring()), base_url="http://127.0.0.1:8000") as client:
        refused = client.post("/mcp", content=call, headers=headers)
        assert refused.status_code == 400, refused.text
        error = refused.json()
        assert error["id"] == 2 and _named(error["error"]["message"], "NaN"), error
    assert stored(mem) == before
    mem.close()


def test_a_forged_cursor_that_gives_a_key_twice_is_damaged(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    mem.add("Ann likes rum", context=CTX)
    page = mem.list_page(limit=1, context=CTX)
    assert page.next_cursor is not None
    padded = page.next_cursor + "=" * (-len(page.next_cursor) % 4)
    made = base64.urlsafe_b64decode(padded).decode()
    forged = made.replace('"o":1,', '"o":1,"o":0,')  # the offset given twice
    assert forged != made
    cursor = base64.urlsafe_b64encode(forged.encode()).decode().rstrip("=")
    with pytest.raises(ValidationError, match="cursor is damaged"):
        mem.list_page(limit=1, cursor=cursor, context=CTX)
    mem.close()


@pytest.mark.parametrize("value", [".nan", "-.inf", "1.0e+999"])
def test_a_document_holding_a_non_finite_float_is_refused(tmp_path: Path, value: str) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(f"backend: embedded\nmax_content_chars: {value}\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=re.escape(f"'{value}' is not a finite number")):
        load_config(file, env={})


def test_a_retention_policy_holding_inf_is_refused_over_rest(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem, with_audit=False)
    policy = "- name: tidy\n  action: archive\n  older_than: .inf\n"
    answer = client.post("/v1/governance/retention", json={"policies": policy}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert "'.inf' is not a finite number" in answer.json()["message"]
    assert stored(mem, with_audit=False) == before
    mem.close()
