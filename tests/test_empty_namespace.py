"""``namespace: ""`` is refused, not read as the default namespace.

``AgentContext`` and ``Scope`` refuse an empty namespace, yet a call that named one
(``list(namespace="")``, ``as_agent(namespace="")``, an empty ``x-namespace`` header, an MCP
``namespace: ""``) silently answered from the default namespace: a script whose variable
came out blank read (or wrote) another namespace than it meant. Each is now refused with
a ``ValidationError`` saying to leave it out or name one; leaving it out still means the
default namespace, and rows stored there stay readable.
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
from test_attack_tenants_identity import cli_home  # noqa: F401 (a fixture)

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.cli.main import main
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory

FIX = "is empty: leave it out to use the default namespace 'inbox'"

READS: dict[str, Any] = {
    "list": lambda m, ns: m.list(namespace=ns, context=CTX),
    "count": lambda m, ns: m.count(namespace=ns, context=CTX),
    "search": lambda m, ns: m.search("tea", namespace=ns, context=CTX),
    "list_page": lambda m, ns: m.list_page(namespace=ns, context=CTX),
}


@pytest.mark.parametrize("read", list(READS))
def test_a_read_naming_an_empty_namespace_is_refused(tmp_path: Path, read: str) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    for empty in ("", "  "):
        with pytest.raises(ValidationError, match=FIX):
            READS[read](mem, empty)
    assert [m.id for m in mem.list(context=CTX)] == [ours]  # left out: the default one
    assert [m.id for m in mem.list(namespace="inbox", context=CTX)] == [ours]
    mem.close()


def test_a_child_context_naming_an_empty_namespace_is_refused() -> None:
    with pytest.raises(ValidationError, match=FIX):
        CTX.as_agent("helper", namespace="")
    assert CTX.as_agent("helper").namespace == "inbox"


def test_rest_refuses_an_empty_namespace_header_and_argument(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    header = client.post(
        "/v1/memories", json={"content": "Ann likes mint"}, headers={**AUTH, "x-namespace": ""}
    )
    assert header.status_code in (400, 422) and "is empty: leave it out" in header.text
    listed = client.post("/v1/memories/list", json={"namespace": ""}, headers=AUTH)
    assert listed.status_code in (400, 422) and "is empty: leave it out" in listed.text
    assert stored(mem) == before
    plain = client.post("/v1/memories/list", json={}, headers=AUTH)
    assert [m["id"] for m in plain.json()] == [ours], plain.text
    mem.close()


def _refused(server: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        with pytest.raises(ToolError) as refused:
            await server.call_tool(tool, arguments)
        text = str(refused.value)
        return dict(json.loads(text[text.index("{") :]))

    return asyncio.run(run())


def test_mcp_refuses_an_empty_namespace_saying_to_omit_it(tmp_path: Path) -> None:
    """MCP refused it already (the argument's schema); kept so it stays refused."""
    mem, _, _ = seeded(tmp_path / "m.db")
    server = build_server(mem, context=CTX)
    error = _refused(server, "memory_search", {"query": "tea", "namespace": ""})
    assert error["code"] == "invalid_input" and "omit for your own namespace" in error["message"]
    mem.close()


def test_stored_rows_of_the_default_namespace_stay_readable(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db")
    row = mem.add("Ann likes green tea")  # the solo context: namespace inbox
    assert mem.get(row.id).namespace == "inbox"
    assert [m.id for m in mem.search("tea")] == [row.id]
    mem.close()


@pytest.mark.usefixtures("cli_home")
def test_the_cli_names_the_fix_for_an_empty_namespace_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["list", "--namespace", "", "--json"])
    error = json.loads(capsys.readouterr().err)["error"]
    assert code == 2 and error["code"] == "invalid_input"
    assert "is empty: leave it out to use the default namespace" in error["message"]


def test_a_langgraph_store_with_an_empty_root_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    from attestor_arango.interfaces.langgraph import AttestorStore

    mem, _, _ = seeded(tmp_path / "m.db")
    with pytest.raises(ValidationError, match=FIX):
        AttestorStore(mem, CTX, root="")
    assert AttestorStore(mem, CTX).root == "inbox"
    mem.close()
