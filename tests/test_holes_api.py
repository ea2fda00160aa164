"""The REST service refuses what it must (issue 16, findings 5, 6, 12, 15), over a real
uvicorn server: policies are data, a keyless server serves only loopback clients, no
request answers 500, revoked keys stop at once, health names no path."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
import yaml
from interface_support import keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api.auth import load_keys
from attestor_arango.memory import AgentMemory

ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")


def _memory(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "memory.db", embedder=HashingEmbedder(64), clock=ManualClock(), ids=SeededIdSource(9)
    )


# finding 5 --------------------------------------------------------------------------------------
def test_retention_policies_naming_a_file_are_refused_without_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "x.yaml").write_text("- name: SECRET-VALUE-42\n  action: delete\n  older_than: 1d\n")
    monkeypatch.setenv("HOME", str(home))
    mem = _memory(tmp_path)
    ring, plain = keyring()
    headers = {"x-api-key": plain["acme-orchestrator"]}
    with running_server(mem, ring) as url, httpx.Client(base_url=url, headers=headers) as c:
        answers = [
            c.post("/v1/governance/retention", json={"policies": p, "dry_run": True})
            for p in ("~/x.yaml", str(home / "x.yaml"), "~/missing.yaml", "/etc/passwd.yml")
        ]
    mem.close()
    assert [r.status_code for r in answers] == [422] * 4, [r.text for r in answers]
    assert all("SECRET-VALUE-42" not in r.text and "does not exist" not in r.text for r in answers)


# finding 6 --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example", "content-type": "text/plain"},
        {"origin": "http://evil.example", "content-type": "application/json"},
        {"host": "evil.example"},
        {"host": "attacker.test:8080", "content-type": "application/json"},
        {"content-type": "text/plain"},
        {"sec-fetch-site": "cross-site", "content-type": "application/json"},
    ],
)
def test_a_no_auth_server_refuses_cross_site_and_foreign_host_requests(
    tmp_path: Path, headers: dict[str, str]
) -> None:
    mem = _memory(tmp_path)
    mem.add("a fact to keep", context=mem.default_context)
    body = json.dumps({"user": mem.default_context.tenant, "reason": "csrf"})
    with running_server(mem, None) as url, httpx.Client(base_url=url) as c:
        purge = c.post("/v1/governance/purge", content=body, headers=headers)
        local = c.get("/v1/stats")
    total = mem.stats().total
    mem.close()
    assert purge.status_code == 403, purge.text
    assert local.status_code == 200 and total == 1


# finding 12 -------------------------------------------------------------------------------------
BAD_BODIES = [
    ("/v1/memories", "[" * 100_000 + "]" * 100_000),
    ("/v1/memories", '{"content": "x", "confidence": ' + "9" * 5000 + "}"),
    ("/v1/memories", '{"content": "bad \\ud800 text"}'),
    ("/v1/memories", '{"content": "x", "valid_from": 1e303}'),
    ("/v1/governance/compact", '{"older_than": 1e308, "dry_run": true}'),
    ("/v1/memories/list", '{"offset": 9223372036854775808}'),
    ("/v1/recall", '{"query": "\\udfff"}'),
    ("/v1/memories", '{"content": ' + '{"a":' * 200 + "1" + "}" * 200 + "}"),
]


def test_malformed_requests_answer_4xx_never_500(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ring, plain = keyring()
    headers = {"x-api-key": plain["acme-orchestrator"], "content-type": "application/json"}
    with running_server(mem, ring) as url, httpx.Client(base_url=url, headers=headers) as c:
        codes = [c.post(path, content=body).status_code for path, body in BAD_BODIES]
        audit = c.get("/v1/audit", params={"after_seq": str(2**63)}).status_code
    total = mem.stats(context=ORCH).total
    mem.close()
    assert all(400 <= code < 500 for code in [*codes, audit]), (codes, audit)
    assert total == 0


# finding 15 -------------------------------------------------------------------------------------
def test_a_key_removed_from_the_key_file_stops_working_without_a_restart(tmp_path: Path) -> None:
    ring, plain = keyring()
    entries = [k.model_dump(mode="json") for k in ring._by_hash.values()]
    key_file = tmp_path / "keys.yaml"
    key_file.write_text(yaml.safe_dump(entries), encoding="utf-8")
    mem = _memory(tmp_path)
    with running_server(mem, load_keys(key_file)) as url, httpx.Client(base_url=url) as c:
        before = c.get("/v1/stats", headers={"x-api-key": plain["acme-reviewer"]}).status_code
        kept = [e for e in entries if e["id"] != "acme-reviewer"]
        time.sleep(0.01)  # a new mtime even on coarse file systems
        key_file.write_text(yaml.safe_dump(kept), encoding="utf-8")
        after = c.get("/v1/stats", headers={"x-api-key": plain["acme-reviewer"]}).status_code
        other = c.get("/v1/stats", headers={"x-api-key": plain["acme-orchestrator"]}).status_code
    mem.close()
    assert (before, after, other) == (200, 401, 200)


def test_health_names_no_server_path(tmp_path: Path) -> None:
    mem = _memory(tmp_path)
    ring, plain = keyring()
    with running_server(mem, ring) as url, httpx.Client(base_url=url) as c:
        r = c.get("/v1/health", headers={"x-api-key": plain["acme-reviewer"]})
    mem.close()
    assert r.status_code == 200
    assert str(tmp_path) not in r.text and "memory.db" not in r.text
