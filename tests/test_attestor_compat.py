"""Issue 18 item 9: code written for Attestor's ``AgentMemory`` runs here.

Each test is a snippet of Attestor's README (../shared/reference, "the API names to
match") that needs no external service, with only the import changed from ``attestor``
to ``attestor_arango``, run against a fresh embedded store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentMemory, AgentRole
from attestor_arango.config import load_config


@pytest.fixture
def mem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentMemory:
    monkeypatch.setenv("ATTESTOR_DISABLE_LOCAL_EMBED", "1")  # the README's own switch
    monkeypatch.setenv("ATTESTOR_HOME", str(tmp_path))
    for name in ("ATTESTOR_EMBEDDER", "ATTESTOR_EMBEDDING_PROVIDER", "ATTESTOR_PATH"):
        monkeypatch.delenv(name, raising=False)
    return AgentMemory()  # picks up env automatically


def test_use_it(mem: AgentMemory, capsys: pytest.CaptureFixture[str]) -> None:
    ctx = AgentContext(
        agent_id="researcher-1",
        role=AgentRole.RESEARCHER,
        namespace="acme-prod",
    )

    mem.add(
        content="Alice is the engineering manager",
        entity="alice",
        category="role",
        context=ctx,
    )

    results = mem.recall(query="who runs engineering?", context=ctx)
    for r in results:
        print(r.score, r.memory.content)

    assert "Alice is the engineering manager" in capsys.readouterr().out


def test_bi_temporal_replay(mem: AgentMemory) -> None:
    ctx = AgentContext(agent_id="researcher-1", role=AgentRole.RESEARCHER, namespace="acme-prod")
    mem.add(
        content="Alice is the engineering manager", entity="alice", category="role", context=ctx
    )

    # What did we believe on March 1?
    before = mem.recall(query="who runs engineering?", as_of="2026-03-01T00:00:00Z", context=ctx)

    # Show me everything we knew about Alice between Feb and Apr
    window = mem.recall(query="alice", time_window=("2026-02-01", "2026-04-01"), context=ctx)

    assert len(before.results) == 0  # written after March 1 2026 by the wall clock
    assert isinstance(window.results, tuple)


def test_chain_of_note_pack(mem: AgentMemory) -> None:
    ctx = AgentContext(agent_id="researcher-1", role=AgentRole.RESEARCHER, namespace="acme-prod")
    added = mem.add(
        content="Alice is the engineering manager", entity="alice", category="role", context=ctx
    )

    pack = mem.recall_as_pack(query="who runs engineering?", context=ctx)
    # pack.memories : list of {id, content, validity_window, confidence, source_episode_id}
    # pack.prompt   : default Chain-of-Note prompt

    assert pack.memories[0]["id"] == added.id
    assert set(pack.memories[0]) == {
        "id",
        "content",
        "validity_window",
        "confidence",
        "source_episode_id",
    }
    assert pack.prompt == pack.render_prompt()
    assert "ABSTAIN" in pack.prompt and "CONFLICT" in pack.prompt


def test_handoff_scratchpad_trail() -> None:
    orchestrator = AgentContext.from_env(agent_id="orchestrator", namespace="project:acme")
    planner = orchestrator.as_agent("planner", role=AgentRole.PLANNER)
    executor = planner.as_agent("executor", role=AgentRole.EXECUTOR)

    # Each child carries parent_agent_id + accumulating agent_trail.
    # All three share the same scratchpad: Dict[str, Any] for typed handoff data.
    assert executor.parent_agent_id == "planner"
    assert tuple(executor.agent_trail) == ("orchestrator", "planner", "executor")
    planner.scratchpad["plan"] = "ship"
    assert executor.scratchpad["plan"] == "ship" and orchestrator.scratchpad["plan"] == "ship"
    assert orchestrator.token_budget == 20_000


def test_write_quotas(mem: AgentMemory) -> None:
    user_id = mem.default_context.tenant
    mem.set_quota(user_id, daily_writes=1)
    mem.add("first")
    with pytest.raises(Exception, match="quota"):
        mem.add("second")
    mem.set_quota(user_id=user_id, daily_writes=None)
    mem.add("third")


def test_gdpr_export_and_purge(tmp_path: Path) -> None:
    # One deviation: here a user is a tenant, and governance runs in that tenant's own
    # context (another tenant's context is refused: tenant isolation), so the memory's
    # default context is user-42's orchestrator.
    mem = AgentMemory(tmp_path, context=AgentContext(tenant="user-42"))
    mem.add("Bob lives in Porto")

    exported = mem.export_user(external_id="user-42")  # full data export
    report = mem.purge_user(
        external_id="user-42",  # cascading hard delete with audit trail
        reason="GDPR right-to-erasure request 2026-04-27",
    )
    log = mem.deletion_audit_log(limit=100)  # forensic readback

    assert [m["content"] for m in exported["memories"]] == ["Bob lives in Porto"]
    assert report.ok
    assert any(entry.target == "user-42" or "user-42" in str(entry) for entry in log)


def test_health_check(mem: AgentMemory) -> None:
    print(mem.health())  # Python API
    assert mem.health()["ok"] is True


def test_search_without_a_query_is_a_filtered_search(mem: AgentMemory) -> None:
    mem.add("Alice is the engineering manager", entity="alice", category="role")
    mem.add("Bob is allergic to peanuts", entity="bob", category="diet")
    assert [m.entity for m in mem.search(category="diet")] == ["bob"]
    assert len(mem.search(limit=10)) == 2


def test_embedding_environment_names() -> None:
    cfg = load_config(
        env={
            "ATTESTOR_EMBEDDING_PROVIDER": "openai",
            "ATTESTOR_EMBEDDING_MODEL": "text-embedding-3-large",
            "OPENAI_API_KEY": "sk-test",
        }
    )
    assert cfg.embedder == "openai" and cfg.embedder_model == "text-embedding-3-large"
    assert cfg.openai_api_key is not None and cfg.openai_api_key.get_secret_value() == "sk-test"
    # this project's own names win where both are set
    both = load_config(env={"ATTESTOR_EMBEDDING_PROVIDER": "openai", "ATTESTOR_EMBEDDER": "local"})
    assert both.embedder == "local"


def test_openai_provider_with_only_a_key_targets_api_openai_com() -> None:
    from attestor_arango.embeddings.chain import OPENAI_DEFAULT_BASE_URL, make_embedder

    cfg = load_config(env={"ATTESTOR_EMBEDDING_PROVIDER": "openai", "OPENAI_API_KEY": "sk-x"})
    embedder = make_embedder(cfg)  # built without a request: the first embed would call out
    assert getattr(embedder, "base_url", OPENAI_DEFAULT_BASE_URL).startswith(
        OPENAI_DEFAULT_BASE_URL
    )
