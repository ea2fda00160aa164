"""The operator surface of the REST service, through real HTTP against a running server.

/docs is fetched and every asset it names is resolved to the installed package's own
file (nothing from a CDN); /metrics is scraped and parsed with prometheus_client's
parser (request counts by route template and status, recall latency, lane errors,
the store size of the scraping key's tenant only); the JSON access log of a real
`attestor-arango api --log-format json` process carries the request id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from interface_support import (
    cli_server,
    keyring,
    running_server,
)
from prometheus_client.parser import text_string_to_metric_families

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api.docs import asset_dir
from attestor_arango.memory import AgentMemory

ACME = {"Authorization": "Bearer key-acme-orchestrator"}
BETA = {"Authorization": "Bearer key-beta-orchestrator"}


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    out = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.append((s.name, dict(s.labels), float(s.value)))
    return out


def value(found: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    hits = [
        v for n, lab, v in found if n == name and all(lab.get(k) == x for k, x in labels.items())
    ]
    assert len(hits) <= 1, (name, labels, hits)
    return hits[0] if hits else 0.0


def test_docs_page_is_served_from_the_package(tmp_path: Path) -> None:
    memory = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ring, _ = keyring()
    with running_server(memory, ring) as base:
        page = httpx.get(base + "/docs")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "default-src 'none'" in page.headers["content-security-policy"]
        refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert refs and all(r.startswith("/docs/assets/") for r in refs), refs
        for ref in refs:
            got = httpx.get(base + ref)
            assert got.status_code == 200, ref
            name = ref.rsplit("/", 1)[1]
            if name != "init.js":
                assert got.content == (asset_dir() / name).read_bytes()
        init = httpx.get(base + "/docs/assets/init.js").text
        assert 'url: "/openapi.json"' in init
        assert httpx.get(base + "/openapi.json").json()["openapi"] == "3.1.0"
        assert httpx.get(base + "/docs/assets/..%2Fpyproject.toml").status_code == 404
        assert httpx.get(base + "/docs/assets/index.html").status_code == 404
    memory.close()


def test_metrics_scraped_and_parsed(tmp_path: Path) -> None:
    memory = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ring, _ = keyring()
    with running_server(memory, ring) as base:
        for text in ("Alice lives in Lyon", "Bob lives in Oslo"):
            r = httpx.post(base + "/v1/memories", json={"content": text}, headers=ACME)
            assert r.status_code == 200
        first = r.json()["id"]
        assert httpx.post(base + "/v1/recall", json={"query": "Lyon"}, headers=ACME).is_success
        assert httpx.get(f"{base}/v1/memories/{first}", headers=ACME).is_success
        assert httpx.get(base + "/v1/memories/nope", headers=ACME).status_code == 404
        assert httpx.get(base + "/v1/stats").status_code == 401

        acme = samples(httpx.get(base + "/metrics", headers=ACME).text)
        route = {"route": "/v1/memories", "method": "POST", "status": "200"}
        assert value(acme, "attestor_http_requests_total", **route) == 2
        one = {"route": "/v1/memories/{memory_id}", "method": "GET"}
        assert value(acme, "attestor_http_requests_total", **one, status="200") == 1
        assert value(acme, "attestor_http_requests_total", **one, status="404") == 1
        assert value(acme, "attestor_http_requests_total", route="/v1/stats", status="401") == 1
        assert value(acme, "attestor_recall_duration_seconds_count", op="recall") == 1
        assert value(acme, "attestor_recall_duration_seconds_bucket", op="recall", le="+Inf") == 1
        assert value(acme, "attestor_tenant_memories", tenant="acme", status="active") == 2
        assert {lab.get("tenant") for n, lab, _ in acme if n == "attestor_tenant_memories"} == {
            "acme"
        }

        beta = samples(httpx.get(base + "/metrics", headers=BETA).text)
        tenants = {lab.get("tenant") for n, lab, _ in beta if n == "attestor_tenant_memories"}
        assert tenants == {"beta"}
        assert value(beta, "attestor_tenant_memories", tenant="beta", status="active") == 0

        anonymous = samples(httpx.get(base + "/metrics").text)
        assert not [n for n, _, _ in anonymous if n == "attestor_tenant_memories"]
        assert value(anonymous, "attestor_http_requests_total", route="/metrics", status="200") == 2
    memory.close()


def test_lane_errors_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ctx = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
    with AgentMemory(path, embedder=HashingEmbedder(64), clock=ManualClock()) as first:
        first.add("first fact", context=ctx)
    # another embedding space: the vector lane fails, recall degrades to text only
    memory = AgentMemory(path, embedder=HashingEmbedder(32), clock=ManualClock())
    ring, _ = keyring()
    with running_server(memory, ring) as base:
        r = httpx.post(base + "/v1/recall", json={"query": "first fact"}, headers=ACME)
        errors = r.json()["errors"]
        assert r.is_success and len(errors) == 1  # the vector lane's reason, by its key
        [lane] = errors
        found = samples(httpx.get(base + "/metrics").text)
        assert value(found, "attestor_recall_lane_errors_total", lane=lane) == 1
        assert sum(v for n, _, v in found if n == "attestor_recall_lane_errors_total") == 1
    memory.close()


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def test_json_request_log_has_the_request_id(tmp_path: Path) -> None:
    with cli_server(tmp_path, "api", "--no-auth", "--log-format", "json") as run:
        base = run.base
        mine = httpx.post(
            base + "/v1/recall", json={"query": "x"}, headers={"X-Request-Id": "req-42"}
        )
        assert mine.headers["x-request-id"] == "req-42"
        fresh = httpx.get(base + "/v1/memories/nope", headers={"X-Request-Id": "bad id {x}"})
        assert re.fullmatch(r"[0-9a-f]{16}", fresh.headers["x-request-id"])
    lines = [e for e in _json_lines(run.log) if e.get("logger") == "attestor_arango.access"]
    by_id = {e["request_id"]: e for e in lines}
    assert by_id["req-42"]["route"] == "/v1/recall" and by_id["req-42"]["status"] == 200
    other = by_id[fresh.headers["x-request-id"]]
    assert other["status"] == 404 and other["route"] == "/v1/memories/{memory_id}"
    assert isinstance(other["duration_ms"], float) and other["ts"].endswith("Z")


def test_text_request_log_holds_no_query_string(tmp_path: Path) -> None:
    """The Evidence Board's pages take the subject's words in the query string
    (``/ui/timeline?entity=...``, ``/ui/recall?query=...``); a log line keeps them beyond
    the reach of ``purge_user``. The access line names the path and the route only, in
    the default text format too (uvicorn's own access line, which prints the query
    string, is off)."""
    word = "".join(("plov", "erquist"))
    with cli_server(tmp_path, "api", "--no-auth", "--log-format", "text") as run:
        base = run.base
        added = httpx.post(base + "/v1/memories", json={"content": f"{word} lives in Oslo"})
        assert added.is_success, added.text
        for page in (f"/ui/timeline?entity={word}", f"/ui/recall?query={word}+Oslo"):
            assert httpx.get(base + page).status_code == 200, page
    log = run.log  # uvicorn's lines (stdout) and the package's (stderr)
    assert "GET /ui/timeline 200" in log and "GET /ui/recall 200" in log  # still logged
    assert word not in log.lower()
