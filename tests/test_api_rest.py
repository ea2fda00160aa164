"""REST service through MemoryClient against a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from interface_support import fingerprint, keyring, running_server

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import (
    AccessDenied,
    AttestorError,
    ConflictError,
    NotFoundError,
    QuotaExceededError,
    ValidationError,
)
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.app import ApiSettings
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.interfaces.api.errors import (
    AuthenticationError,
    PayloadTooLarge,
    RequestTimeout,
)
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Stats

ACME_ORCH = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")


def make_memory(path: Path) -> AgentMemory:
    return AgentMemory(
        path / "api.db",
        embedder=HashingEmbedder(64),
        clock=ManualClock(),
        ids=SeededIdSource(11),
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AgentMemory, str, dict]]:
    memory = make_memory(tmp_path_factory.mktemp("api"))
    ring, plain = keyring()
    with running_server(memory, ring) as url:
        yield memory, url, plain
    memory.close()


def client(url: str, plain: dict[str, str], key_id: str, **kw: object) -> MemoryClient:
    return MemoryClient(url, plain[key_id], **kw)  # type: ignore[arg-type]


def test_round_trip_matches_the_library(served: tuple[AgentMemory, str, dict]) -> None:
    memory, url, plain = served
    with client(url, plain, "acme-executor") as c:
        first = c.add("Alice lives in Paris", entity="Alice", category="city", tags=["geo"])
        second = c.add("Alice lives in Lyon", entity="Alice", category="city")
        ctx = AgentContext(agent_id="executor-1", role="executor", tenant="acme")
        assert c.get(first.id) == memory.get(first.id, context=ctx)
        assert second.supersedes == first.id
        assert second.provenance.agent_id == "executor-1"
        assert second.provenance.role == "executor"
        at = second.t_created
        assert c.get(first.id, as_of=at) == memory.get(first.id, as_of=at, context=ctx)
        assert c.timeline("Alice", as_of=at) == memory.timeline("Alice", as_of=at, context=ctx)
        assert c.list(as_of=at) == memory.list(as_of=at, context=ctx)
        assert c.current_facts(entity="Alice", as_of=at) == memory.current_facts(
            entity="Alice", as_of=at, context=ctx
        )
        assert c.search("Lyon", as_of=at) == memory.search("Lyon", as_of=at, context=ctx)
        remote = c.recall("where does Alice live", as_of=at)
        local = memory.recall("where does Alice live", as_of=at, context=ctx)
        assert remote == local and len(remote.results) >= 1
        assert c.recall_as_pack("Alice", as_of=at) == memory.recall_as_pack(
            "Alice", as_of=at, context=ctx
        )
        stats = c.stats()
        assert isinstance(stats, Stats) and stats.tenant == "acme" and stats.active >= 1
        assert c.audit_log() == memory.audit_log(context=ctx)
        assert "embedder" in c.health()


def test_update_and_forget_round_trip(served: tuple[AgentMemory, str, dict]) -> None:
    _, url, plain = served
    with client(url, plain, "acme-orchestrator") as c:
        m = c.add("Build server is ci-7", entity="build", category="host")
        newer = c.update(m.id, content="Build server is ci-8")
        assert newer.supersedes == m.id and newer.entity == "build"  # unset fields kept
        with pytest.raises(ConflictError):
            c.update(m.id, content="again")
        gone = c.forget(newer.id, reason="decommissioned")
        assert gone.status.value == "archived" and gone.t_expired is not None
        with pytest.raises(ConflictError):
            c.forget(newer.id)


def test_typed_errors_come_back(served: tuple[AgentMemory, str, dict]) -> None:
    memory, url, plain = served
    before = fingerprint(memory)
    with client(url, plain, "acme-orchestrator") as c:
        with pytest.raises(NotFoundError):
            c.get("no-such-id")
        with pytest.raises(ValidationError):
            c.add("")
        with pytest.raises(ValidationError):
            c.add("naive time", valid_from="2026-01-01T00:00:00")
        with pytest.raises(ValidationError):
            c.add("bad confidence", confidence=7.0)
        with pytest.raises(ValidationError):
            c.recall("x", token_budget=0)
    with pytest.raises(AuthenticationError), MemoryClient(url, "wrong-key") as bad:
        bad.stats()
    with pytest.raises(AuthenticationError), MemoryClient(url) as anonymous:
        anonymous.stats()
    assert fingerprint(memory) == before


def _needed(op: str) -> str:
    return {"add": "write", "update": "write", "forget": "forget"}.get(op, "read")


GRANTS = {
    "orchestrator": {"read", "write", "forget"},
    "planner": {"read", "write"},
    "executor": {"read", "write"},
    "researcher": {"read", "write"},
    "reviewer": {"read"},
    "monitor": {"read"},
}
CORE_OPS = [
    "add",
    "update",
    "forget",
    "get",
    "list",
    "count",
    "list_page",
    "get_episode",
    "search",
    "recall",
    "recall_as_pack",
    "timeline",
    "current_facts",
    "stats",
    "audit_log",
]


def _episode_or_none(c: MemoryClient) -> object:
    """get_episode past the permission check: a missing episode is NotFound, not denied."""
    try:
        return c.get_episode("no-such-episode")
    except NotFoundError as exc:
        return exc


def _invoke(c: MemoryClient, op: str, memory_id: str) -> object:
    calls = {
        "add": lambda: c.add(f"fact {time.monotonic_ns()}", entity="rbac", category="probe"),
        "update": lambda: c.update(memory_id, content=f"v {time.monotonic_ns()}"),
        "forget": lambda: c.forget(memory_id, reason="rbac"),
        "get": lambda: c.get(memory_id),
        "list": lambda: c.list(),
        "count": lambda: c.count(),
        "list_page": lambda: c.list_page(limit=2),
        "get_episode": lambda: _episode_or_none(c),
        "search": lambda: c.search("target"),
        "recall": lambda: c.recall("target"),
        "recall_as_pack": lambda: c.recall_as_pack("target"),
        "timeline": lambda: c.timeline("rbac-target"),
        "current_facts": lambda: c.current_facts(),
        "stats": lambda: c.stats(),
        "audit_log": lambda: c.audit_log(),
    }
    return calls[op]()


@pytest.mark.parametrize("op", CORE_OPS)
@pytest.mark.parametrize("role", list(GRANTS))
def test_rbac_matrix(served: tuple[AgentMemory, str, dict], role: str, op: str) -> None:
    memory, url, plain = served
    target = memory.add(f"target {role} {op}", entity="rbac-target", context=ACME_ORCH)
    allowed = _needed(op) in GRANTS[role]
    before = fingerprint(memory)
    with client(url, plain, f"acme-{role}") as c:
        if allowed:
            assert _invoke(c, op, target.id) is not None
        else:
            with pytest.raises(AccessDenied):
                _invoke(c, op, target.id)
            assert fingerprint(memory) == before


def test_a_reviewer_key_cannot_ask_for_a_writer_role(served: tuple[AgentMemory, str, dict]) -> None:
    memory, url, plain = served
    before = fingerprint(memory)
    widened = AgentContext(agent_id="reviewer-1", role="orchestrator", tenant="acme")
    with client(url, plain, "acme-reviewer", context=widened) as c:
        with pytest.raises(AccessDenied, match="does not grant role"):
            c.add("sneaky write")
        with pytest.raises(AccessDenied):
            c.stats()  # the whole identity is refused, not just writes
    assert fingerprint(memory) == before


def test_read_only_header_narrows_a_writer(served: tuple[AgentMemory, str, dict]) -> None:
    memory, url, plain = served
    before = fingerprint(memory)
    ro = AgentContext(agent_id="executor-1", role="executor", tenant="acme", read_only=True)
    with client(url, plain, "acme-executor", context=ro) as c:
        with pytest.raises(AccessDenied):
            c.add("not allowed")
        assert c.stats().tenant == "acme"
    assert fingerprint(memory) == before


def test_agent_ids_and_trail_are_limited_to_the_key(served: tuple[AgentMemory, str, dict]) -> None:
    _, url, plain = served
    mallory = AgentContext(agent_id="mallory", role="executor", tenant="acme")
    with client(url, plain, "acme-executor", context=mallory) as c, pytest.raises(AccessDenied):
        c.add("as someone else")
    parent = AgentContext(agent_id="executor-1", role="executor", tenant="acme")
    child = parent.as_agent("executor-2")
    with client(url, plain, "acme-executor", context=child) as c:
        m = c.add("handed off", entity="handoff", category="note")
    assert m.provenance.agent_trail == ("executor-1", "executor-2")
    assert m.provenance.parent_agent_id == "executor-1"


def _call_route(c: MemoryClient, op: str) -> object:
    args: dict[str, dict[str, object]] = {
        "add": {"content": "x"},
        "get": {"memory_id": "m"},
        "get_episode": {"episode_id": "ep"},
        "update": {"memory_id": "m", "content": "y"},
        "forget": {"memory_id": "m"},
        "search": {"query": "q"},
        "recall": {"query": "q"},
        "recall_as_pack": {"query": "q"},
        "explain_recall": {"query": "q"},
        "recall_trace": {"recall_id": "rc_" + "0" * 24},
        "timeline": {"entity": "e"},
        "export_user": {"user": "acme"},
        "import_user": {"data": {}},
        "purge_user": {"user": "acme", "reason": "test"},
        "set_quota": {"user": "acme", "daily_writes": 5},
        "quota_status": {"user": "acme"},
        "compact": {"older_than": "30d"},
        "verify_memory": {"memory_id": "m"},
        "ingest_round": {"turn": {"user": "I live in Oslo"}},
        "add_turns": {"turns": [{"speaker": "Ann", "text": "I live in Oslo"}]},
    }
    return getattr(c, op)(**args.get(op, {}))


def test_cross_tenant_identity_is_refused_on_every_route(
    served: tuple[AgentMemory, str, dict],
) -> None:
    """A beta key asking to act in tenant acme is refused before any route runs."""
    memory, url, plain = served
    before = fingerprint(memory)
    acme = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")
    mounted = [r.op for r in spec.ROUTES if callable(getattr(AgentMemory, r.op, None))]
    assert "add" in mounted and "stats" in mounted
    with client(url, plain, "beta-orchestrator", context=acme) as c:
        for op in mounted:
            with pytest.raises(AccessDenied, match="tenant"):
                _call_route(c, op)
    assert fingerprint(memory) == before


def test_other_tenants_ids_and_rows_are_invisible(served: tuple[AgentMemory, str, dict]) -> None:
    memory, url, plain = served
    secret = memory.add("acme secret plan zebra", entity="plan", context=ACME_ORCH)
    before = fingerprint(memory)
    with client(url, plain, "beta-orchestrator") as c:
        with pytest.raises(NotFoundError):
            c.get(secret.id)
        with pytest.raises(NotFoundError):
            c.update(secret.id, content="overwritten")
        with pytest.raises(NotFoundError):
            c.forget(secret.id)
        assert all(m.tenant == "beta" for m in c.list(status="all"))
        assert c.search("zebra") == []
        assert all(r.memory.tenant == "beta" for r in c.recall("secret plan zebra").results)
        assert c.timeline("plan") == []
        assert c.stats().tenant == "beta"
    assert fingerprint(memory) == before


def test_write_limit_per_agent_counts_across_requests(tmp_path: Path) -> None:
    memory = make_memory(tmp_path)
    key = ApiKey(
        id="limited",
        sha256=hash_key("limited-key"),
        tenant="acme",
        roles=("executor",),
        agent_ids=("bot",),
        max_writes_per_agent=2,
    )
    with running_server(memory, KeyRing([key])) as url, MemoryClient(url, "limited-key") as c:
        c.add("one")
        c.add("two")
        with pytest.raises(QuotaExceededError):
            c.add("three")
    memory.close()


def test_body_limit_and_bad_requests(tmp_path: Path) -> None:
    memory = make_memory(tmp_path)
    ring, plain = keyring()
    settings = ApiSettings(max_body_bytes=2048)
    headers = {"authorization": f"Bearer {plain['acme-orchestrator']}"}
    with running_server(memory, ring, settings) as url:
        before = fingerprint(memory)
        with MemoryClient(url, plain["acme-orchestrator"]) as c, pytest.raises(PayloadTooLarge):
            c.add("x" * 5000)
        raw = httpx.post(f"{url}/v1/memories", content=b"{not json", headers=headers)
        assert raw.status_code == 422 and raw.json()["code"] == "invalid_input"
        raw = httpx.post(f"{url}/v1/memories", json={"content": "a", "evil": 1}, headers=headers)
        assert raw.status_code == 422 and set(raw.json()) == {"code", "message", "details"}
        raw = httpx.post(f"{url}/v1/memories", json=["a"], headers=headers)
        assert raw.status_code == 422
        raw = httpx.get(f"{url}/v1/nowhere", headers=headers)
        assert raw.status_code == 404 and raw.json()["code"] == "route_not_found"
        raw = httpx.delete(f"{url}/v1/memories", headers=headers)
        assert raw.status_code == 405 and raw.json()["code"] == "method_not_allowed"
        doc = httpx.get(f"{url}/openapi.json").json()
        assert doc["openapi"].startswith("3.1")
        assert {"post"} <= set(doc["paths"]["/v1/memories"])
        assert fingerprint(memory) == before
    memory.close()


class SlowMemory(AgentMemory):
    def stats(self, *, context: AgentContext | None = None) -> Stats:
        time.sleep(1.5)
        return super().stats(context=context)


def test_request_timeout_is_a_typed_504(tmp_path: Path) -> None:
    memory = SlowMemory(tmp_path / "slow.db", embedder=HashingEmbedder(64), clock=ManualClock())
    ring, plain = keyring()
    with (
        running_server(memory, ring, ApiSettings(request_timeout_s=0.2, cancel_grace_s=0.0)) as url,
        MemoryClient(url, plain["acme-reviewer"]) as c,
        pytest.raises(RequestTimeout),
    ):
        c.stats()
    memory.close()


def test_unreachable_server_is_a_typed_error() -> None:
    from interface_support import free_port

    with (
        MemoryClient(f"http://127.0.0.1:{free_port()}", "k", timeout=2) as c,
        pytest.raises(AttestorError, match="cannot reach"),
    ):
        c.stats()


def test_no_auth_mode_acts_as_the_default_context(tmp_path: Path) -> None:
    memory = make_memory(tmp_path)
    with running_server(memory, None) as url, MemoryClient(url) as c:
        m = c.add("solo note")
        assert m.tenant == "local" and m.provenance.agent_id == "solo"
        other = AgentContext(agent_id="solo", role="orchestrator", tenant="acme")
        with pytest.raises(AccessDenied):
            c.stats(context=other)
    memory.close()


def test_out_of_range_epoch_is_a_validation_error(served: tuple[AgentMemory, str, dict]) -> None:
    _, url, plain = served
    with client(url, plain, "acme-orchestrator") as c:
        try:
            c.recall("anything", as_of=-62135596801)
        except ValidationError:
            return
        except AttestorError as err:
            raise AssertionError(f"expected a 422 ValidationError, got {err.code}") from err
        raise AssertionError("an out-of-range as_of was accepted")


def test_governance_over_rest(tmp_path: Path) -> None:
    memory = make_memory(tmp_path)
    ring, plain = keyring()
    with running_server(memory, ring) as url:
        orch = MemoryClient(url, plain["acme-orchestrator"])
        rev = MemoryClient(url, plain["acme-reviewer"])
        beta = MemoryClient(url, plain["beta-orchestrator"])
        first = orch.add("Carol leads the infra team", entity="Carol", category="role")
        orch.add("Carol leads the data team", entity="Carol", category="role")
        beta.add("beta's own fact")
        beta_before = fingerprint(memory, "beta")

        assert orch.set_quota("acme", daily_writes=1000)["daily_writes"] == 1000
        assert orch.quota_status()["daily_writes"] == 1000
        chain = rev.verify_audit_chain()
        assert chain.ok and chain.tenant == "acme" and chain.entries >= 1
        with pytest.raises(ValidationError, match="signing"):
            rev.verify_all()  # signing is off: a typed, actionable refusal
        with pytest.raises(AccessDenied):
            rev.export_user("acme")
        with pytest.raises(AccessDenied):
            rev.purge_user("acme", "reviewers cannot erase")
        with pytest.raises(AccessDenied):
            orch.export_user("beta")
        with pytest.raises(AccessDenied):
            orch.purge_user("beta", "cross-tenant erasure attempt")
        with pytest.raises(AccessDenied):
            orch.verify_audit_chain("beta")
        assert fingerprint(memory, "beta") == beta_before

        exported = orch.export_user("acme")
        assert {m["id"] for m in exported["memories"]} == {
            m.id for m in memory.list(status="all", context=ACME_ORCH)
        }
        report = orch.purge_user("acme", "GDPR erasure request 42")
        assert report.ok and report.tenant == "acme"
        assert orch.stats().total == 0
        with pytest.raises(NotFoundError):
            orch.get(first.id)
        orch.import_user(exported)
        assert [m.content for m in orch.timeline("Carol")] == [
            "Carol leads the infra team",
            "Carol leads the data team",
        ]
        assert orch.deletion_audit_log()  # the purge left its trace
        retention = orch.apply_retention(
            [{"name": "old", "action": "archive", "older_than": "3650d"}], dry_run=True
        )
        assert retention.dry_run and retention.ok
        assert fingerprint(memory, "beta") == beta_before
        for c in (orch, rev, beta):
            c.close()
    memory.close()


def test_ingest_round_over_rest(served: tuple[AgentMemory, str, dict]) -> None:
    _, url, plain = served
    with client(url, plain, "acme-researcher") as c:
        result = c.ingest_round(
            {"user": "My name is Dana and I live in Oslo.", "assistant": "Noted."}
        )
        assert result.episode.tenant == "acme"
        assert result.episode.agent_id == "researcher-1"
        assert all(m.tenant == "acme" for m in result.memories)
    with client(url, plain, "acme-monitor") as c, pytest.raises(AccessDenied):
        c.ingest_round({"user": "monitors cannot write"})


GOVERNANCE_CALLS: dict[str, tuple[str, Any]] = {
    "set_quota": ("forget", lambda c, mid: c.set_quota("acme", daily_writes=10_000)),
    "quota_status": ("read", lambda c, mid: c.quota_status()),
    "export_user": ("forget", lambda c, mid: c.export_user("acme")),
    "import_user": ("forget", lambda c, mid: c.import_user({"format": "nonsense"})),
    "purge_user": ("forget", lambda c, mid: c.purge_user("acme", "rbac matrix")),
    "apply_retention": ("forget", lambda c, mid: c.apply_retention([], dry_run=True)),
    "compact": ("forget", lambda c, mid: c.compact(older_than="3650d", dry_run=True)),
    "verify_audit_chain": ("read", lambda c, mid: c.verify_audit_chain()),
    "deletion_audit_log": ("read", lambda c, mid: c.deletion_audit_log()),
    "audit_page": ("read", lambda c, mid: c.audit_page(limit=5)),
    "explain_recall": ("read", lambda c, mid: c.explain_recall("gov target")),
    "recall_trace": ("read", lambda c, mid: c.recall_trace("rc_" + "0" * 24)),
    "verify_memory": ("read", lambda c, mid: c.verify_memory(mid)),
    "verify_all": ("read", lambda c, mid: c.verify_all()),
    "ingest_round": ("write", lambda c, mid: c.ingest_round({"user": "I work in Rome."})),
    "add_turns": (
        "write",
        lambda c, mid: c.add_turns([{"speaker": "Ann", "text": "I work in Rome."}]),
    ),
    "consolidate": ("write", lambda c, mid: c.consolidate(limit=5)),
    "reflect": ("read", lambda c, mid: c.reflect(store=False)),
}


@pytest.fixture(scope="module")
def gov_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AgentMemory, str, dict]]:
    memory = make_memory(tmp_path_factory.mktemp("gov"))
    ring, plain = keyring()
    with running_server(memory, ring) as url:
        yield memory, url, plain
    memory.close()


def test_governance_matrix_covers_every_mounted_route() -> None:
    core = set(CORE_OPS) | {"health"}
    mounted = {r.op for r in spec.ROUTES if callable(getattr(AgentMemory, r.op, None))}
    assert mounted - core <= set(GOVERNANCE_CALLS), mounted - core - set(GOVERNANCE_CALLS)


@pytest.mark.parametrize("op", list(GOVERNANCE_CALLS))
@pytest.mark.parametrize("role", list(GRANTS))
def test_rbac_matrix_governance_and_ingest(
    gov_served: tuple[AgentMemory, str, dict], role: str, op: str
) -> None:
    """Allowed roles get past the permission check (other typed errors may follow); the
    rest get AccessDenied and the store is unchanged."""
    memory, url, plain = gov_served
    target = memory.add(f"gov target {role} {op}", context=ACME_ORCH)
    needed, invoke = GOVERNANCE_CALLS[op]
    before = fingerprint(memory)
    with client(url, plain, f"acme-{role}") as c:
        if needed in GRANTS[role]:
            try:
                invoke(c, target.id)
            except AccessDenied as err:  # pragma: no cover - the failure being tested for
                pytest.fail(f"{role} was refused {op}: {err.message}")
            except (ValidationError, ConflictError, NotFoundError):
                pass  # past the permission check; the arguments were the problem
        else:
            with pytest.raises(AccessDenied):
                invoke(c, target.id)
            assert fingerprint(memory) == before


def test_namespace_limited_key_stays_in_its_namespaces(tmp_path: Path) -> None:
    memory = make_memory(tmp_path)
    ns_key = ApiKey(
        id="ns",
        sha256=hash_key("ns-key"),
        tenant="acme",
        roles=("orchestrator",),
        agent_ids=("ns-bot",),
        namespaces=("team-a",),
    )
    private = AgentContext(agent_id="boss", role="orchestrator", tenant="acme", namespace="hr")
    secret = memory.add("salary bands are confidential", context=private)
    before = fingerprint(memory)
    with running_server(memory, KeyRing([ns_key])) as url, MemoryClient(url, "ns-key") as c:
        mine = c.add("team-a ships on Friday")
        assert mine.namespace == "team-a"
        assert [m.id for m in c.list()] == [mine.id]
        with pytest.raises(AccessDenied):
            c.list(namespace="hr")
        with pytest.raises(NotFoundError):
            c.get(secret.id)
        assert c.search("salary") == []
        with pytest.raises(AccessDenied, match="whole tenant"):
            c.export_user("acme")
        with pytest.raises(AccessDenied, match="whole tenant"):
            c.purge_user("acme", "namespace key tries a tenant-wide erase")
        hr = AgentContext(agent_id="ns-bot", role="orchestrator", tenant="acme", namespace="hr")
        with pytest.raises(AccessDenied):
            c.stats(context=hr)
    after = fingerprint(memory)
    assert after[0] == sorted([*before[0], (mine.id, mine.content_hash, "active", "None")])
    memory.close()


def test_add_turns_over_rest_stores_what_the_library_would(
    served: tuple[AgentMemory, str, dict],
) -> None:
    memory, url, plain = served
    turns = [
        {"speaker": "Dana", "text": "I adopted a greyhound named Pixel", "session_id": "s-rest"},
        {"speaker": "Eli", "text": "Pixel is a lovely name", "session_id": "s-rest"},
    ]
    with client(url, plain, "acme-executor") as c:
        stored = c.add_turns(turns)
        ctx = AgentContext(agent_id="executor-1", role="executor", tenant="acme")
        assert all(t["text"] in m.content for m, t in zip(stored, turns, strict=True))
        assert [m.entity for m in stored] == ["Dana", "Eli"]
        assert [memory.get(m.id, context=ctx) for m in stored] == stored
    with client(url, plain, "acme-reviewer") as c, pytest.raises(AccessDenied):
        c.add_turns(turns)


def test_reports_carry_their_verdicts_on_the_wire(served: tuple[AgentMemory, str, dict]) -> None:
    """A REST caller without our client reads ``ok`` (and ``status``) from the JSON itself:
    they are properties of the report types, which a field-by-field dump would drop."""
    _, url, plain = served
    headers = {"authorization": f"Bearer {plain['acme-reviewer']}"}
    raw = httpx.post(f"{url}/v1/audit/verify", json={}, headers=headers)
    assert raw.status_code == 200, raw.text
    body = raw.json()
    assert body["ok"] is True and body["problems"] == []
    raw = httpx.get(f"{url}/v1/audit/page", params={"limit": 2}, headers=headers)
    assert raw.status_code == 200 and raw.json()["ok"] is True
    pack = httpx.post(f"{url}/v1/recall/pack", json={"query": "Alice"}, headers=headers)
    assert pack.status_code == 200, pack.text
    assert "prompt" not in pack.json()  # only verdicts are added, not derived text
    with client(url, plain, "acme-reviewer") as c:
        assert c.verify_audit_chain().ok  # the client still decodes the report
