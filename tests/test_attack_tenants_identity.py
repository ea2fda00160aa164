"""Attacks on who a caller is: an agent id padded with spaces, a blank one, an empty
tenant flag, a read-only switch spelt another way. Each must fail closed (a typed error,
a 4xx, a non-zero exit) and store nothing.

Findings (session 16), each failing before its fix:
- REST and MCP over HTTP: ``X-Agent-Id: " bot"`` passed the key's agent check (it was
  compared stripped) but the context kept the padded name, so every padding was a fresh
  agent with a fresh ``max_writes_per_agent`` counter (the ceiling never held) and a
  second name in the audit chain. The header is now read stripped; a blank one is a 422.
- The CLI read ``--tenant ''`` (and ``--agent-id ''``, ``--role ''``) as absent and ran
  as the default tenant ``local``: a scripted tenant that came out blank wrote into
  another tenant. An empty flag is now refused.
- Two tenants' keys that share an ``id`` (an operator's label, e.g. one "bot-key" per
  tenant) shared one write counter per agent: one tenant's writes spent the other's
  ``max_writes_per_agent``. Counters are now kept per key digest.
- ``ATTESTOR_READ_ONLY`` was true only for ``1``/``true``/``yes``: ``on``, ``TRUE `` (a
  trailing space) or ``y`` left the CLI's context writable. It is now read as the
  configuration's booleans are, and anything else is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attack_support import stored
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us, iso
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key, load_keys
from attestor_arango.interfaces.cli.main import main
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ACME = AgentContext(agent_id="o", tenant="acme")


def _client(tmp_path: Path, **grant: object) -> tuple[AgentMemory, TestClient]:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    values: dict[str, object] = {
        "id": "w",
        "sha256": hash_key("key-w"),
        "tenant": "acme",
        "roles": ("executor",),
        "agent_ids": ("bot",),
    }
    values.update(grant)
    ring = KeyRing([ApiKey.model_validate(values)])
    return mem, TestClient(create_app(mem, ring), raise_server_exceptions=False)


def test_a_padded_agent_id_is_the_same_agent_and_its_write_ceiling_holds(
    tmp_path: Path,
) -> None:
    mem, client = _client(tmp_path, max_writes_per_agent=2)
    codes = []
    for i, agent in enumerate(["bot", "bot", "bot ", " bot", "  bot  ", "bot   "]):
        headers = {"x-api-key": "key-w", "x-agent-id": agent}
        r = client.post("/v1/memories", json={"content": f"fact {i}"}, headers=headers)
        codes.append(r.status_code)
    assert codes == [200, 200, 429, 429, 429, 429], codes
    assert mem.stats(context=ACME).total == 2
    names = {e.agent_id for e in mem.store.read_audit(Scope("acme"), 1000, 0)}
    assert names == {"bot"}, names
    mem.close()


def test_keys_of_two_tenants_with_one_id_do_not_share_a_write_counter(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    keys = [
        ApiKey(id="bot-key", sha256=hash_key(f"key-{t}"), tenant=t, roles=("executor",),
               agent_ids=("bot",), max_writes_per_agent=2)
        for t in ("acme", "beta")
    ]  # fmt: skip
    client = TestClient(create_app(mem, KeyRing(keys)), raise_server_exceptions=False)

    def write(tenant: str, text: str) -> int:
        headers = {"x-api-key": f"key-{tenant}"}
        return client.post("/v1/memories", json={"content": text}, headers=headers).status_code

    spent = [write("acme", f"acme fact {i}") for i in range(3)]
    assert spent == [200, 200, 429], spent
    assert [write("beta", f"beta fact {i}") for i in range(3)] == [200, 200, 429]
    beta = AgentContext(agent_id="o", tenant="beta")
    assert mem.stats(context=beta).total == 2
    mem.close()


@pytest.mark.parametrize("agent", ["   ", " "])
def test_a_blank_agent_id_header_is_a_4xx_and_stores_nothing(tmp_path: Path, agent: str) -> None:
    mem, client = _client(tmp_path, agent_ids=("*",))
    before = stored(mem)
    headers = {"x-api-key": "key-w", "x-agent-id": agent}
    r = client.post("/v1/memories", json={"content": "a fact"}, headers=headers)
    assert r.status_code in (400, 403, 422), r.text
    assert r.json()["message"]
    assert stored(mem) == before
    mem.close()


@pytest.mark.parametrize("tenant", ["ACME", "acme ", " acme", "acme/", "acme/../acme", "*"])
def test_a_tenant_header_that_differs_from_the_key_in_any_way_is_refused(
    tmp_path: Path, tenant: str
) -> None:
    """Guarantee (held before): the key's tenant is compared exactly; no case folding,
    trimming or path normalisation lets a header reach a look-alike tenant."""
    mem, client = _client(tmp_path)
    before = stored(mem, with_audit=False)
    headers = {"x-api-key": "key-w", "x-tenant": tenant}
    r = client.post("/v1/memories", json={"content": "a fact"}, headers=headers)
    assert r.status_code in (403, 422), r.text
    assert stored(mem, with_audit=False) == before
    mem.close()


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The in-process CLI on a store of its own, no identity from the environment."""
    import os

    for name in list(os.environ):
        if name.startswith(("ATTESTOR_", "ARANGO_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ATTESTOR_PATH", str(tmp_path / "memory.db"))
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    return tmp_path


def _cli_rows(home: Path) -> int:
    mem = AgentMemory(home / "memory.db", embedder=HashingEmbedder(64))
    try:
        return sum(mem.store.count_rows(Scope(t))["total"] for t in ("local", "acme"))
    finally:
        mem.close()


@pytest.mark.parametrize("flag", ["--tenant", "--agent-id", "--role", "--namespace"])
def test_an_empty_identity_flag_fails_closed(
    cli_home: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["add", "a fact from a script", flag, "", "--json"])
    err = capsys.readouterr().err
    assert code != 0, err
    assert json.loads(err)["error"]["code"] == "invalid_input"
    assert _cli_rows(cli_home) == 0


@pytest.mark.parametrize("value", ["on", "TRUE ", "Yes", "y", "1"])
def test_read_only_spelt_any_usual_way_keeps_the_cli_read_only(
    cli_home: Path, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTESTOR_READ_ONLY", value)
    assert AgentContext.from_env().read_only
    code = main(["add", "a fact", "--json"])
    err = capsys.readouterr().err
    assert code != 0 and json.loads(err)["error"]["code"] == "permission_denied", err
    assert _cli_rows(cli_home) == 0


@pytest.mark.parametrize("value", ["maybe", "tru", "2"])
def test_a_read_only_switch_that_is_no_boolean_is_refused(
    cli_home: Path, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTESTOR_READ_ONLY", value)
    with pytest.raises(ValidationError, match="ATTESTOR_READ_ONLY"):
        AgentContext.from_env()
    code = main(["add", "a fact", "--json"])
    assert code != 0
    assert json.loads(capsys.readouterr().err)["error"]["code"] == "invalid_input"
    assert _cli_rows(cli_home) == 0


@pytest.mark.parametrize("value", ["off", "0", "false", "No"])
def test_read_only_off_leaves_the_cli_writable(
    cli_home: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTESTOR_READ_ONLY", value)
    assert not AgentContext.from_env().read_only
    assert main(["add", "a fact", "--json"]) == 0
    assert _cli_rows(cli_home) == 1


def test_an_expired_key_is_refused_at_once_and_stores_nothing(tmp_path: Path) -> None:
    """Finding: a key could not expire (no such field: a key file naming one failed to
    load). ``expires_at`` now ends a key at that moment, over REST and MCP alike."""
    clock = ManualClock()
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock)
    ends = clock.now_us() + 60_000_000
    key = ApiKey.model_validate(
        {"id": "temp", "sha256": hash_key("key-t"), "tenant": "acme",
         "roles": ["executor"], "agent_ids": ["bot"], "expires_at": iso(ends)}
    )  # fmt: skip
    assert key.expires_at == from_us(ends)
    ring = KeyRing([key], clock=clock)
    client = TestClient(create_app(mem, ring), raise_server_exceptions=False)
    headers = {"x-api-key": "key-t"}
    assert client.post("/v1/memories", json={"content": "a"}, headers=headers).status_code == 200
    clock.advance(seconds=60)
    before = stored(mem)
    r = client.post("/v1/memories", json={"content": "b"}, headers=headers)
    assert r.status_code == 401, r.text
    assert "expired" in r.json()["message"]
    assert client.get("/v1/stats", headers=headers).status_code == 401
    assert stored(mem) == before
    mem.close()


@pytest.mark.parametrize("when", ["2030-01-01T00:00:00", "soon", "2030-02-30T00:00:00Z"])
def test_a_key_whose_expiry_is_no_aware_time_is_refused_when_loaded(when: object) -> None:
    entry = {"id": "temp", "sha256": hash_key("key-t"), "tenant": "acme",
             "roles": ["executor"], "agent_ids": ["bot"], "expires_at": when}  # fmt: skip
    with pytest.raises(ValidationError, match="invalid API key entry"):
        load_keys(None, env={"ATTESTOR_API_KEYS": json.dumps([entry])})


@pytest.mark.parametrize(("value", "status"), [("maybe", 422), ("ture", 422), ("on", 403),
                                               ("YES ", 403), ("0", 200)])  # fmt: skip
def test_a_read_only_header_is_a_boolean_or_a_422(tmp_path: Path, value: str, status: int) -> None:
    """Finding: ``X-Read-Only: maybe`` (or a misspelt ``ture``) was read as false, so a
    request that asked to be read-only could write. It is read as ``ATTESTOR_READ_ONLY``."""
    mem, client = _client(tmp_path)
    before = stored(mem, with_audit=False)
    headers = {"x-api-key": "key-w", "x-read-only": value}
    r = client.post("/v1/memories", json={"content": "a fact"}, headers=headers)
    assert r.status_code == status, r.text
    if status != 200:
        assert stored(mem, with_audit=False) == before
    mem.close()
