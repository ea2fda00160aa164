"""Attack battery: GET on the MCP endpoint opened a stream that never ended.

The endpoint is stateless (every POST stands alone, no session id is issued), so the
server has nothing to send on a standalone stream, and an MCP client opens one only with
a session id. Yet a GET with a valid key got ``200 text/event-stream`` and a stream held
open, with its own MCP session task, until the caller left: a caller could hold as many
as it opened connections (measured: ``curl -m 5`` on ``attestor-arango mcp --transport
http`` timed out on the open stream). A GET is now answered ``405`` (``Allow: POST``,
as the protocol lets a server that offers no stream answer) with a JSON-RPC error, at
once; POST and ``/healthz`` are served as before.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from attack_support import AUTH, acme_ring, seeded
from starlette.testclient import TestClient

from attestor_arango.interfaces.mcp_http import MCP_PATH, create_mcp_app

HEADERS = {
    **AUTH,
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}


async def _first_answer(app: Any, method: str, path: str) -> dict[str, Any]:
    """The ``http.response.start`` of one request, the app's lifespan run around it; the
    request is cancelled once its answer started (an open stream never completes)."""
    to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    from_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    lifespan = asyncio.create_task(app({"type": "lifespan"}, to_app.get, from_app.put))
    await to_app.put({"type": "lifespan.startup"})
    assert (await from_app.get())["type"] == "lifespan.startup.complete"
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if not gone.is_set():
            gone.set()
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the caller stays connected
        raise AssertionError("unreachable")

    started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and not started.done():
            started.set_result(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
        + [(b"host", b"127.0.0.1:8000")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    request = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait({request, started}, return_when=asyncio.FIRST_COMPLETED)
    answer = started.result() if started.done() else {}
    request.cancel()
    await asyncio.gather(request, return_exceptions=True)
    await to_app.put({"type": "lifespan.shutdown"})
    await from_app.get()
    await lifespan
    return answer


def test_a_get_on_the_mcp_endpoint_is_405_not_an_open_stream(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    app = create_mcp_app(mem, acme_ring())
    answer = asyncio.run(_first_answer(app, "GET", MCP_PATH))
    headers = {k.decode().lower(): v.decode() for k, v in answer.get("headers", [])}
    assert answer.get("status") == 405, answer
    assert headers.get("allow") == "POST"
    assert headers.get("content-type", "").startswith("application/json")
    again = create_mcp_app(mem, acme_ring())  # an app's session manager runs once
    with TestClient(again, base_url="http://127.0.0.1:8000") as client:  # the whole answer
        got = client.get(MCP_PATH, headers=HEADERS)
        assert got.status_code == 405 and got.json()["error"]["code"] == -32600
    mem.close()


def test_post_and_healthz_are_served_as_before(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    app = create_mcp_app(mem, acme_ring())
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "memory_recall", "arguments": {"query": "Ann"}}}  # fmt: skip
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        posted = client.post(MCP_PATH, content=json.dumps(call),
                             headers={**HEADERS, "content-type": "application/json"})  # fmt: skip
        assert posted.status_code == 200 and "Ann likes green tea" in posted.text
        assert client.get("/healthz").json() == {"status": "ok"}
        keyless = client.get(MCP_PATH, headers={"accept": "text/event-stream"})
        assert keyless.status_code == 401  # the key is still checked first
    mem.close()
