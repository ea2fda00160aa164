"""recall_as_pack and the Chain-of-Note prompt, through AgentMemory on the embedded store."""

from __future__ import annotations

import json

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.pack import ContextPack
from tests.support.trace_reading import trace_text


def fill(mem: AgentMemory, clock: ManualClock) -> None:
    mem.add("Alice lives in Paris", entity="Alice", category="home")
    clock.advance(days=1)
    mem.add("Alice works at Acme as an engineer", entity="Alice", category="job")
    clock.advance(days=1)
    mem.add("Bob bakes bread on weekends", entity="Bob", category="hobby")
    clock.advance(days=1)


def test_pack_is_frozen_hashable_and_canonical_json(mem: AgentMemory, clock: ManualClock) -> None:
    fill(mem, clock)
    pack = mem.recall_as_pack("Where does Alice live?")
    assert isinstance(pack, ContextPack) and len(pack) >= 2
    assert pack.entries[0].content == "Alice lives in Paris"
    assert hash(pack) == hash(mem.recall_as_pack("Where does Alice live?", as_of=pack.as_of))
    with pytest.raises(AttributeError):
        pack.query = "x"  # type: ignore[misc]
    data = json.loads(pack.to_json())
    assert data["entries"][0]["valid_until"] is None
    assert data["entries"][0]["agent_id"] == "solo"
    assert set(data["entries"][0]) >= {
        "id",
        "content",
        "valid_from",
        "valid_until",
        "confidence",
        "source_episode_id",
        "agent_id",
        "role",
        "agent_trail",
    }


def test_prompt_has_notes_citations_abstain_and_conflict(
    mem: AgentMemory, clock: ManualClock
) -> None:
    fill(mem, clock)
    pack = mem.recall_as_pack("Where does Alice live?")
    prompt = pack.render_prompt()
    first = pack.entries[0]
    assert f"[{first.id}] valid {first.valid_from} .. open" in prompt
    assert "Question: Where does Alice live?" in prompt
    for word in ("NOTES", "SYNTHESIS", "ABSTAIN", "CONFLICT", "[id]"):
        assert word in prompt
    assert prompt == pack.render_prompt()


def test_superseded_fact_shows_its_closed_window_in_a_replay(
    mem: AgentMemory, clock: ManualClock
) -> None:
    mem.add("Alice lives in Paris", entity="Alice", category="home")
    clock.advance(days=2)
    before = clock.now_us()
    clock.advance(days=2)
    mem.add("Alice lives in Berlin", entity="Alice", category="home")
    clock.advance(days=1)
    now = mem.recall_as_pack("Where does Alice live?")
    assert [e.content for e in now.entries][:1] == ["Alice lives in Berlin"]
    assert "Alice lives in Paris" not in [e.content for e in now.entries]
    then = mem.recall_as_pack("Where does Alice live?", as_of=before / 1_000_000)
    assert [e.content for e in then.entries] == ["Alice lives in Paris"]


def test_recall_accumulates_the_context_token_budget(mem: AgentMemory, clock: ManualClock) -> None:
    fill(mem, clock)
    ctx = AgentContext(agent_id="r", role=AgentRole.REVIEWER)
    r1 = mem.recall("Alice", context=ctx)
    r2 = mem.recall_as_pack("bread", context=ctx)
    assert ctx.token_budget_used == r1.tokens_used + r2.tokens_used > 0


def test_read_only_roles_may_pack_and_bad_context_is_refused(mem: AgentMemory) -> None:
    ctx = AgentContext(agent_id="x", role=AgentRole.MONITOR, read_only=True)
    assert mem.recall_as_pack("anything at all", context=ctx).entries == ()
    with pytest.raises(ValidationError):
        mem.recall_as_pack("anything", context="not a context")  # type: ignore[arg-type]


def test_trace_file_via_config(tmp_path, clock: ManualClock) -> None:  # type: ignore[no-untyped-def]
    from attestor_arango.config import load_config
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.ids import SeededIdSource

    path = tmp_path / "trace.jsonl"
    cfg = load_config(path=str(tmp_path / "m.db"), trace={"enabled": True, "path": str(path)})
    with AgentMemory(
        config=cfg, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(1)
    ) as m:
        m.add("Carol plays the violin", entity="Carol")
        clock.advance(seconds=5)
        m.recall("violin")
        m.recall("Carol")
    events = [json.loads(x) for x in trace_text(path).splitlines()]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len({e["recall_id"] for e in events}) == 2
    assert "violin" not in trace_text(path)


def test_llm_lanes_stay_off_unless_configured(
    mem: AgentMemory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attestor_arango.llm as llm_pkg
    from attestor_arango.retrieval import RetrievalConfig

    def no_llm(*args: object, **kwargs: object) -> None:
        raise AssertionError("an LLM provider was built on the read path with the lanes off")

    monkeypatch.setattr(llm_pkg, "provider_from_settings", no_llm)
    fill(mem, clock)
    assert mem.recall("Alice").errors == {}
    # switched on but no LLM configured: the lanes simply do not run
    monkeypatch.undo()
    mem.retrieval_config = RetrievalConfig(hyde_enabled=True, multi_query_enabled=True)
    resp = mem.recall("Alice")
    assert resp.errors == {} and all(
        set(r.breakdown.lanes) <= {"vector", "bm25"} for r in resp.results
    )
