"""An adversarial battery over REST, MCP and the CLI: each hostile input gets a clear 4xx,
a typed MCP error result or a CLI error with a non-zero exit code, never a 500 or a
traceback, and a refused request changes nothing stored (every table of the store is
compared byte for byte; a refused *permission* may add its audit entry, by design).

The inputs: huge and empty bodies, deep nesting, non-JSON content, unicode edge cases
(lone surrogates, NUL, right-to-left overrides), negative and huge limits and budgets,
times far in the future, the past and malformed, unknown fields, tenant and namespace
names with path separators or wildcards, and the ids of another tenant's memories.
Findings these found are fixed in their own commits (see the other
``test_attack_inputs_*`` files); what is here passes on the code of its commit and keeps
it so.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, OTHER, acme_ring, seeded, stored
from interface_support import PYTHON, cli_env
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import ApiSettings, create_app
from attestor_arango.interfaces.mcp import build_server

JSON = {**AUTH, "content-type": "application/json"}
THEIRS = "@theirs"  # replaced by the id of tenant beta's memory
OURS = "@ours"

# (method, path, raw body or None, extra headers, expected status)
REST: dict[str, tuple[str, str, bytes | None, dict[str, str], int]] = {
    "empty body where content is required": ("POST", "/v1/memories", b"", {}, 422),
    "blank body": ("POST", "/v1/memories", b" \n ", {}, 422),
    "a JSON array body": ("POST", "/v1/memories", b"[1, 2]", {}, 422),
    "a JSON string body": ("POST", "/v1/memories", b'"add this"', {}, 422),
    "form-encoded body": ("POST", "/v1/memories", b"content=x", {}, 422),
    "bytes that are not UTF-8": ("POST", "/v1/memories", b'{"content": "\xff\xfe"}', {}, 422),
    "trailing garbage": ("POST", "/v1/memories", b'{"content": "a"} x', {}, 422),
    "60k open brackets": ("POST", "/v1/memories", b"[" * 60_000, {}, 422),
    "objects 40 deep": ("POST", "/v1/memories", b'{"a":' * 40 + b"1" + b"}" * 40, {}, 422),
    "metadata 40 deep": (
        "POST", "/v1/memories",
        b'{"content": "Ann likes mint", "metadata": ' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}",
        {}, 422,
    ),
    "body over the size limit": (
        "POST", "/v1/memories", b'{"content": "' + b"x" * 70_000 + b'"}', {}, 413
    ),
    "content over the length limit": (
        "POST", "/v1/memories", b'{"content": "' + b"x" * 40_000 + b'"}', {}, 422
    ),
    "an integer of 5000 digits": ("POST", "/v1/memories/list", b'{"limit": ' + b"9" * 5000 + b"}",
                                  {}, 422),
    "lone surrogate in content": ("POST", "/v1/memories", b'{"content": "a\\ud800"}', {}, 422),
    "lone surrogate in a key": ("POST", "/v1/memories", b'{"content": "a", "\\udc00": 1}', {},
                                422),
    "NUL in content": ("POST", "/v1/memories", b'{"content": "a\\u0000b"}', {}, 422),
    "NUL in a query": ("POST", "/v1/search", b'{"query": "tea\\u0000"}', {}, 200),
    "RTL override in a query": ("POST", "/v1/recall", b'{"query": "\\u202etea"}', {}, 200),
    "NaN confidence": ("POST", "/v1/memories", b'{"content": "a", "confidence": NaN}', {}, 422),
    "Infinity as_of": ("POST", "/v1/memories/list", b'{"as_of": Infinity}', {}, 422),
    "negative limit": ("POST", "/v1/memories/list", b'{"limit": -1}', {}, 422),
    "zero limit": ("POST", "/v1/search", b'{"query": "tea", "limit": 0}', {}, 422),
    "huge limit": ("POST", "/v1/memories/list", b'{"limit": 10000000000000000000000}', {}, 422),
    "huge offset": ("POST", "/v1/memories/list", b'{"offset": 10000000000000000000000}', {},
                    422),
    "negative budget": ("POST", "/v1/recall", b'{"query": "tea", "token_budget": -5}', {}, 422),
    "zero budget": ("POST", "/v1/recall/pack", b'{"query": "tea", "token_budget": 0}', {}, 422),
    "budget beyond a float": ("POST", "/v1/recall", b'{"query": "tea", "token_budget": 1e999}',
                              {}, 422),
    "as_of in the year 9999": ("POST", "/v1/memories/list",
                               b'{"as_of": "9999-12-31T23:59:59Z"}', {}, 422),
    "as_of tomorrow-ish": ("POST", "/v1/memories/list", b'{"as_of": "2999-01-01T00:00:00Z"}',
                           {}, 422),
    "as_of before year 1": ("POST", "/v1/recall",
                            b'{"query": "tea", "as_of": -62135596801}', {}, 422),
    "as_of year 0": ("POST", "/v1/recall", b'{"query": "tea", "as_of": "0000-01-01T00:00:00Z"}',
                     {}, 422),
    "as_of without a zone": ("POST", "/v1/recall",
                             b'{"query": "tea", "as_of": "2026-01-01T00:00:00"}', {}, 422),
    "as_of February 30": ("POST", "/v1/memories/list", b'{"as_of": "2026-02-30T00:00:00Z"}',
                          {}, 422),
    "as_of garbage": ("POST", "/v1/memories/list", b'{"as_of": "yesterday"}', {}, 422),
    "as_of in the distant past": ("POST", "/v1/memories/list",
                                  b'{"as_of": "0001-01-01T00:00:00Z"}', {}, 200),
    "window reversed": ("POST", "/v1/recall", b'{"query": "tea", "time_window": '
                        b'["2030-01-01T00:00:00Z", "2020-01-01T00:00:00Z"]}', {}, 422),
    "window of three": ("POST", "/v1/recall", b'{"query": "tea", "time_window": [1, 2, 3]}',
                        {}, 422),
    "unknown field": ("POST", "/v1/memories", b'{"content": "a", "tenant": "beta"}', {}, 422),
    "unknown query parameter": ("GET", "/v1/stats?tenant=beta", None, {}, 422),
    "tenant header of another tenant": ("POST", "/v1/memories/list", b"{}",
                                        {"x-tenant": "beta"}, 403),
    "tenant header wildcard": ("POST", "/v1/memories/list", b"{}", {"x-tenant": "*"}, 403),
    "namespace header with ..": ("POST", "/v1/memories/list", b"{}",
                                 {"x-namespace": "../beta"}, 422),
    "namespace header wildcard": ("POST", "/v1/memories/list", b"{}", {"x-namespace": "*"}, 422),
    "namespace argument wildcard": ("POST", "/v1/memories/list", b'{"namespace": "%"}', {}, 422),
    "export of another tenant": ("POST", "/v1/governance/export", b'{"user": "beta"}', {}, 403),
    "export by Attestor's alias": ("POST", "/v1/governance/export",
                                   b'{"external_id": "beta"}', {}, 403),
    "purge of a wildcard tenant": ("POST", "/v1/governance/purge", b'{"user": "*"}', {}, 403),
    "quota of a path tenant": ("GET", "/v1/governance/quota?user=../beta", None, {}, 403),
    "read another tenant's memory": ("GET", f"/v1/memories/{THEIRS}", None, {}, 404),
    "update another tenant's memory": ("PATCH", f"/v1/memories/{THEIRS}",
                                       b'{"content": "hijacked"}', {}, 404),
    "forget another tenant's memory": ("POST", f"/v1/memories/{THEIRS}/forget", b"{}", {}, 404),
    "a path-like memory id": ("GET", "/v1/memories/..%2F..%2Fetc", None, {}, 404),
    "a wildcard memory id": ("POST", "/v1/memories/%25/forget", b"{}", {}, 404),
    "a wildcard trace id": ("GET", "/v1/recall/traces/*", None, {}, 422),
    "a damaged cursor": ("POST", "/v1/memories/page", b'{"cursor": "!!"}', {}, 422),
    "a cursor of 60k characters": ("POST", "/v1/memories/page",
                                   b'{"cursor": "' + b"A" * 60_000 + b'"}', {}, 422),
    "update content as a number": ("PATCH", f"/v1/memories/{OURS}", b'{"content": 5}', {}, 422),
    "a wrong method": ("DELETE", "/v1/memories/list", None, {}, 405),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REST))
def test_rest_answers_hostile_input_with_a_4xx_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    mem, ours, theirs = seeded(tmp_path)
    settings = ApiSettings(max_body_bytes=65_536)
    client = TestClient(create_app(mem, acme_ring(), settings), raise_server_exceptions=False)
    method, path, body, headers, status = REST[case]
    path = path.replace(THEIRS, theirs).replace(OURS, ours)
    before, before_rows = stored(mem), stored(mem, with_audit=False)
    answer = client.request(method, path, content=body, headers={**JSON, **headers})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    if status >= 400:
        error = answer.json()
        assert set(error) == {"code", "message", "details"} and error["message"]
        assert "Traceback" not in answer.text
    if status in (200, 403):  # a read may audit nothing; a refused permission is audited
        assert stored(mem, with_audit=False) == before_rows
    else:
        assert stored(mem) == before
    assert mem.get(theirs, context=OTHER).content == "Bob likes coffee"
    mem.close()


MCP: dict[str, tuple[str, dict[str, Any]]] = {
    "a huge query": ("memory_recall", {"query": "tea " * 5000}),
    "a huge fact": ("memory_add", {"content": "x" * 40_000}),
    "a blank query": ("memory_search", {"query": "   "}),
    "NUL in content": ("memory_add", {"content": "a\x00b"}),
    "NUL in an entity": ("memory_add", {"content": "Ann likes mint", "entity": "a\x00"}),
    "a negative limit": ("memory_search", {"query": "tea", "limit": -1}),
    "a huge limit": ("memory_search", {"query": "tea", "limit": 10**22}),
    "a huge budget": ("memory_recall", {"query": "tea", "token_budget": 10**22}),
    "a zero budget": ("memory_recall_pack", {"query": "tea", "token_budget": 0}),
    "as_of in the future": ("memory_get", {"memory_id": OURS, "as_of": "2999-01-01T00:00:00Z"}),
    "as_of in year 9999": ("memory_recall", {"query": "tea", "as_of": "9999-12-31T23:59:59Z"}),
    "as_of malformed": ("memory_recall", {"query": "tea", "as_of": "2026-13-01T00:00:00Z"}),
    "as_of without a zone": ("memory_timeline", {"entity": "ann", "as_of": "2026-01-01T00:00"}),
    "a reversed window": ("memory_recall", {"query": "tea", "time_window": [
        "2030-01-01T00:00:00Z", "2020-01-01T00:00:00Z"]}),
    "an unknown argument": ("memory_add", {"content": "Ann likes mint", "tenant": "beta"}),
    "a namespace with ..": ("memory_search", {"query": "tea", "namespace": "../beta"}),
    "a wildcard namespace": ("memory_search", {"query": "tea", "namespace": "*"}),
    "another tenant's id": ("memory_get", {"memory_id": THEIRS}),
    "forget another tenant's id": ("memory_forget", {"memory_id": THEIRS}),
    "a wildcard id": ("memory_forget", {"memory_id": "*"}),
    "a limit as text": ("memory_search", {"query": "tea", "limit": "5"}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(MCP))
def test_mcp_answers_hostile_input_with_an_error_result_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    mem, ours, theirs = seeded(tmp_path)
    server = build_server(mem, context=CTX)
    tool, arguments = MCP[case]
    arguments = {
        k: (theirs if v == THEIRS else ours if v == OURS else v) for k, v in arguments.items()
    }
    before = stored(mem)

    async def call() -> str:
        with pytest.raises(ToolError) as refused:
            await server.call_tool(tool, arguments)
        return str(refused.value)

    text = asyncio.run(call())
    error = json.loads(text[text.index("{") :])
    assert error["code"] in ("invalid_input", "not_found"), error
    assert error["message"] and "Traceback" not in text
    assert stored(mem) == before
    assert mem.get(theirs, context=OTHER).content == "Bob likes coffee"
    mem.close()


CLI: dict[str, tuple[list[str], int]] = {
    "an as_of in the future": (["list", "--as-of", "2999-01-01T00:00:00Z"], 2),
    "an as_of malformed": (["list", "--as-of", "soon"], 2),
    "a negative limit": (["list", "--limit", "-5"], 2),
    "a huge limit": (["search", "tea", "--limit", "99999999999999999999999"], 2),
    "a wildcard tenant": (["list", "--tenant", "*"], 2),
    "a namespace with ..": (["add", "Ann likes mint", "--namespace", "../beta"], 2),
    "NUL-free but surrogate metadata": (["add", "Ann likes mint", "--metadata", '{"a": "\\ud800"}'],
                                        2),
    "metadata that is a list": (["add", "Ann likes mint", "--metadata", "[1]"], 2),
    "an unknown id": (["get", "0000-does-not-exist"], 3),
    "an import file that is not there": (["import", "/nonexistent/export.json"], 2),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CLI))
def test_the_cli_answers_hostile_input_with_a_json_error_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    argv, code = CLI[case]
    env = cli_env(tmp_path)
    run = [PYTHON, "-m", "attestor_arango.interfaces.cli.main"]
    seed = subprocess.run([*run, "add", "Ann likes tea", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert seed.returncode == 0, seed.stderr
    before = subprocess.run([*run, "export", "--json"], env=env, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    done = subprocess.run([*run, *argv, "--json"], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    error = json.loads(done.stderr)["error"]
    assert error["code"] and error["message"]
    after = subprocess.run([*run, "export", "--json"], env=env, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    memories = [json.loads(out.stdout)["memories"] for out in (before, after)]
    assert memories[0] == memories[1] and len(memories[0]) == 1
