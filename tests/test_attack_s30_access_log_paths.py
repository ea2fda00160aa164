"""Session 30 attack: the REST access log wrote each request's raw path, and a path carries
what the caller put in it.

``/v1/memories/{memory_id}`` takes any text as the id (a client that passed a name, a
sentence of the subject, a mistyped URL), an unmatched path (``/v1/people/<name>``) is
logged too, and the Evidence Board's ``/ui/memory/{memory_id}`` names the rows a subject's
reviewer opened. ``purge_user`` cannot reach a log line: after the erasure the words and
ids stayed in it. The access line (text and JSON) now names the route template the request
matched (``/v1/memories/{memory_id}``, ``/ui/memory/{memory_id}``; ``unmatched`` for none),
never the path, and a method outside the HTTP set as ``other`` (as the metrics do).

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from attack_support import AUTH, acme_ring, seeded
from starlette.testclient import TestClient

from attestor_arango.interfaces.api import logs
from attestor_arango.interfaces.api.app import create_app
from tests.interface_support import cli_server


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_access_log_names_routes_not_the_paths_asked(
    tmp_path: Path, fmt: str, capfd: pytest.CaptureFixture[str]
) -> None:
    word = "".join(("qz", "ingeborg", "sen"))
    mem, ours, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    package = logging.getLogger("attestor_arango")
    kept = (list(package.handlers), package.level, package.propagate)
    logs.configure(fmt)
    try:
        capfd.readouterr()
        asked = {
            f"/v1/memories/{word}%20lives%20in%20Oslo": 404,
            f"/v1/memories/{ours}": 200,
            f"/v1/people/{word}": 404,
            f"/ui/memory/{ours}": 200,
            f"/ui/static/{word}.css": 404,
        }
        for path, status in asked.items():
            assert client.get(path, headers=AUTH).status_code == status, path
        assert client.request(word.upper(), "/v1/stats", headers=AUTH).status_code == 405
        log = capfd.readouterr().err
    finally:
        package.handlers[:], package.level, package.propagate = kept[0], kept[1], kept[2]
    for route in ("/v1/memories/{memory_id}", "unmatched", "/ui/memory/{memory_id}"):
        assert route in log  # still one line per request, by what it asked for
    assert word not in log.lower() and ours not in log
    mem.close()


def test_mcp_over_http_logs_no_path_or_query_string(tmp_path: Path) -> None:
    """``mcp --transport http --log-level info`` left uvicorn's own access line on, which
    prints the path and query string as sent: any client (no key needed to be logged)
    put a subject's words in the operator's log. Its access lines are now the package's
    (route template, method, status)."""
    word = "".join(("qz", "sigrun", "dottir"))
    args = ("mcp", "--transport", "http", "--no-auth", "--log-level", "info")
    with cli_server(tmp_path, *args) as run:
        base = run.base
        assert httpx.get(f"{base}/mcp/{word}?query={word}").status_code == 404
        assert httpx.post(f"{base}/mcp?query={word}", json={}).status_code == 400
    log = run.log
    assert "GET unmatched 404" in log and "POST /mcp 400" in log  # still one line each
    assert word not in log.lower()
