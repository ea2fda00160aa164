"""Session 28 attack: the REST process kept the purged subject's words in the URLs it parsed.

A client of the service reads by URL: the Evidence Board's search (``/ui/memories?q=``),
its timeline (``/ui/timeline?entity=``) and recall, and a path naming an entity. Starlette
parses a request's URL with ``urllib.parse.urlsplit``, which the standard library keeps in
an ``lru_cache`` of the last 128 URLs (Python 3.11+). After ``purge_user`` emptied every
memo of the package (``memo.forget_all``), that cache still held each URL whole, the
subject's name and queries in it, reachable in the serving process until 128 other URLs
pushed them out. An erasure now empties the standard library's URL caches with the memos
(``urllib.parse.clear_cache``), and nothing reachable in the process holds a word of it.

The requests are handed to the ASGI app as a server hands them (a scope and a body), not
through an HTTP client object: a client library keeps its own cache of the URLs it sent
(httpx does), which lives in the client's process, not the service's.
"""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from attack_support import CTX, acme_ring
from test_erasure_residue import _word, reachable_holders

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.memory import AgentMemory

HEADERS = [(b"authorization", b"Bearer secret"), (b"x-agent-id", b"orch")]


def _serve(app: Any, method: str, target: str, body: bytes = b"") -> tuple[int, bytes]:
    """One request as an ASGI server hands it over; the response's status and body."""
    path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [*HEADERS, (b"content-type", b"application/json"), (b"host", b"memory")],
        "server": ("memory", 80),
        "client": ("127.0.0.1", 5000),
    }
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return int(status), b"".join(
        m.get("body", b"") for m in sent if m["type"] == "http.response.body"
    )


def test_a_purge_leaves_no_url_naming_the_subject_in_the_serving_process(tmp_path: Path) -> None:
    word = _word("zyx", "qurl", "mvo")
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add(f"{word.capitalize()} lives in Paris", entity=word, context=CTX)
    app = create_app(mem, acme_ring())
    pages = (
        f"/ui/memories?q={quote(word)}",
        f"/ui/timeline?entity={quote(word)}",
        f"/ui/recall?q={quote('where does ' + word + ' live')}",
        f"/v1/timeline/{quote(word)}",
    )
    assert [_serve(app, "GET", page)[0] for page in pages][:3] == [200, 200, 200]
    gc.collect()
    assert reachable_holders(word), "the scan must see the word before the purge"

    purge = json.dumps({"user": "acme", "reason": "GDPR erasure request #28"}).encode()
    status, answer = _serve(app, "POST", "/v1/governance/purge", purge)
    assert status == 200 and json.loads(answer)["ok"], answer
    gc.collect()

    assert sorted(set(reachable_holders(word))) == []
    mem.close()
