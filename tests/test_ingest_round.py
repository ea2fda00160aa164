"""ingest_round end to end on the embedded store: episode, attribution, replay, atomicity."""

from __future__ import annotations

import json

import pytest

from attestor_arango.clock import ManualClock, iso
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.errors import AccessDenied, QuotaExceededError, ValidationError
from attestor_arango.ingest import Action, Backends
from attestor_arango.ingest.consolidation import consolidate
from attestor_arango.llm import RetryPolicy
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import TemporalView
from tests.support.scripted_llm import ScriptedProvider


def contents(memories: list) -> list[str]:
    return [m.content for m in memories]


def speaker_of(m: object) -> str:
    return m.metadata["ingest"]["speaker"]  # type: ignore[attr-defined]


def test_episode_is_stored_verbatim_and_is_every_decisions_evidence(mem: AgentMemory) -> None:
    turn = {
        "user": "I live in Paris. Can you suggest a bakery?",
        "assistant": "Du Pain et des Idées is a famous bakery. You will love it!",
        "timestamp": "2026-01-01T00:00:00Z",
        "session_id": "s-1",
    }
    result = mem.ingest_round(turn)
    stored = mem.store.get_episode(mem.default_context.scope, result.episode.id)
    assert stored is not None
    assert stored.user_text == turn["user"] and stored.assistant_text == turn["assistant"]
    assert stored.session_id == "s-1"
    assert [d.action for d in result.decisions] == [Action.ADD, Action.ADD]
    assert all(d.evidence_episode_id == stored.id for d in result.decisions)
    for m in result.memories:
        assert m.provenance.source_episode_id == stored.id and m.provenance.session_id == "s-1"
        assert m.metadata["ingest"]["evidence_episode_id"] == stored.id
    actions = [e.action for e in mem.audit_log()]
    assert actions.index("episode") < actions.index("ingest_round")


def test_assistant_statements_are_never_stored_as_the_users(mem: AgentMemory) -> None:
    mem.ingest_round(
        {
            "user": "I love hiking.",
            "assistant": "You work at Google, right? You live in Munich. "
            "Climbing gyms are popular in Munich.",
            "user_name": "Caroline",
        }
    )
    caroline = mem.current_facts(entity="Caroline")
    assert contents(caroline) == ["I love hiking."]
    assistant = [m for m in mem.current_facts() if speaker_of(m) == "assistant"]
    assert contents(assistant) == ["Climbing gyms are popular in Munich."]
    assert all(m.entity != "Caroline" for m in assistant)
    assert not any("Google" in m.content for m in mem.current_facts())


def test_llm_extraction_borrowing_the_assistants_words_is_rejected(mem: AgentMemory) -> None:
    provider = ScriptedProvider(
        [
            json.dumps({"facts": [{"text": "The user works at Google", "subject": "user"}]}),
            json.dumps({"facts": []}),
        ]
    )
    mem.ingest_backends = Backends.llm(provider)
    result = mem.ingest_round({"user": "Good morning!", "assistant": "You work at Google."})
    assert result.memories == () and any("not grounded" in w for w in result.warnings)
    assert "ASSISTANT MESSAGE" in provider.calls[1]["prompt"]
    assert "Google" not in provider.calls[0]["prompt"]  # the user prompt never sees the assistant


def test_replay_before_and_after_the_round(mem: AgentMemory, clock: ManualClock) -> None:
    first = mem.ingest_round({"user": "I live in Paris.", "timestamp": "2026-01-01T00:00:00Z"})
    clock.advance(days=10)
    between = iso(clock.now_us())
    clock.advance(days=1)
    second = mem.ingest_round(
        {"user": "I moved to Berlin last week.", "timestamp": "2026-01-12T00:00:00Z"}
    )
    assert [d.action for d in second.decisions] == [Action.INVALIDATE]
    old_id = first.memories[0].id
    assert second.decisions[0].target_id == old_id
    assert contents(mem.current_facts(entity="user", as_of=between)) == ["I live in Paris."]
    assert contents(mem.current_facts(entity="user")) == ["I moved to Berlin last week."]
    before = mem.recall("where does the user live", as_of=between)
    assert [r.memory.content for r in before] == ["I live in Paris."]
    after = mem.recall("where does the user live")
    assert [r.memory.content for r in after if r.memory.category != "relation"] == [
        "I moved to Berlin last week."
    ]
    assert after.results[0].memory.content == "I moved to Berlin last week."
    old = mem.get(old_id)
    assert old.superseded_by == second.memories[0].id and not old.is_active
    assert mem.get(old_id, as_of=between).is_active  # replay masks the later close


def test_event_time_is_the_turns_time_not_the_ingest_time(mem: AgentMemory) -> None:
    result = mem.ingest_round(
        {"user": "I work at Siemens. We go camping the first weekend of August.",
         "timestamp": "2025-06-04T09:00:00Z"}
    )  # fmt: skip
    job, camping = result.memories
    assert iso(job.us("valid_from")) == "2025-06-04T09:00:00Z"
    assert (iso(job.us("t_created")) or "").startswith("2026-01-01T00:00:00")  # injected clock
    assert iso(camping.us("valid_from")) == "2025-08-02T00:00:00Z"
    assert iso(camping.us("valid_until")) == "2025-08-04T00:00:00Z"
    assert camping.metadata["ingest"]["time_expression"] == "the first weekend of August"
    assert camping.metadata["ingest"]["time_precision"] == "weekend"


def test_same_round_later_statement_wins(mem: AgentMemory) -> None:
    result = mem.ingest_round({"user": "I live in Paris. Actually, I just moved to Berlin."})
    assert [d.action for d in result.decisions] == [Action.ADD, Action.INVALIDATE]
    assert contents(mem.current_facts(entity="user")) == ["Actually, I just moved to Berlin."]


def test_graph_gets_typed_relations_and_supersedes_edges(mem: AgentMemory) -> None:
    mem.ingest_round({"user": "I work at Siemens. I live in Paris.", "user_name": "Ana"})
    mem.ingest_round({"user": "We moved from Paris to Lyon.", "user_name": "Ana"})
    view = TemporalView(as_of=mem.clock.now_us())
    edges = {
        (r.source, r.relation, r.target)
        for r in mem.store.relations_touching(mem.default_context.scope, ["ana", "lyon"], view)
    }
    assert {("ana", "works_at", "siemens"), ("ana", "lives_in", "lyon")} <= edges
    assert ("lyon", "supersedes", "paris") in edges
    names = {e.key for e in mem.store.list_entities(mem.default_context.scope)}
    assert {"ana", "siemens", "paris", "lyon"} <= names


def test_round_is_atomic_under_the_daily_quota(mem: AgentMemory) -> None:
    mem.set_quota("local", daily_writes=2)
    with pytest.raises(QuotaExceededError):
        mem.ingest_round({"user": "I live in Oslo. I work at Equinor. I love skiing."})
    assert mem.current_facts() == []  # none of the three, not the first two
    # nor the episode: kept, a round over quota could be sent again and again, each time
    # storing an episode the quota never counts (tests/test_holes_quota_batches.py)
    assert mem.stats().episodes == 0
    assert "ingest_round" not in [e.action for e in mem.audit_log()]


def test_read_only_roles_cannot_ingest_and_nothing_is_stored(mem: AgentMemory) -> None:
    reviewer = AgentContext(agent_id="rev", role=AgentRole.REVIEWER)
    with pytest.raises(AccessDenied):
        mem.ingest_round({"user": "I live in Oslo."}, context=reviewer)
    assert mem.stats().episodes == 0 and mem.current_facts() == []


@pytest.mark.parametrize(
    "turn",
    [
        {"user": "", "assistant": "  "},
        {"user": "I live in Oslo.", "timestamp": "2026-01-01T00:00:00"},
        {"user": "I live in Oslo.", "speaker": "bob"},
        "I live in Oslo.",
    ],
)
def test_bad_turns_are_refused_before_anything_is_stored(mem: AgentMemory, turn: object) -> None:
    with pytest.raises(ValidationError):
        mem.ingest_round(turn)  # type: ignore[arg-type]
    assert mem.stats().episodes == 0


def test_llm_round_with_each_failure_mode(mem: AgentMemory) -> None:
    first = mem.ingest_round({"user": "I live in Paris. I love jazz."})
    paris, jazz = (m.id for m in first.memories)
    user_facts = {
        "facts": [
            {"text": "I moved to Berlin", "attribute": "location", "value": "Berlin",
             "single_valued": True},
            {"text": "I love jazz", "attribute": "likes", "value": "jazz"},
            {"text": "I adopted a cat named Miso", "attribute": "owns", "value": "cat"},
        ]
    }  # fmt: skip
    provider = ScriptedProvider(
        [
            json.dumps(user_facts),
            json.dumps({"facts": []}),
            json.dumps({"action": "INVALIDATE", "target_id": paris, "reason": "moved"}),
            {"error": "timeout"},  # jazz: falls back to the rules, which find it known
            "garbage",  # the cat: unparseable, so ADD
        ],
        retry=RetryPolicy(attempts=1),
    )
    mem.ingest_backends = Backends.llm(provider)
    result = mem.ingest_round(
        {"user": "I moved to Berlin. I love jazz. I adopted a cat named Miso.", "assistant": "Ok"}
    )
    got = [(d.action, d.target_id, d.decided_by) for d in result.decisions]
    assert got == [
        (Action.INVALIDATE, paris, "llm"),
        (Action.NOOP, jazz, "fallback"),
        (Action.ADD, None, "fallback"),
    ]
    assert provider.remaining == 0
    assert sorted(contents(mem.current_facts())) == [
        "I adopted a cat named Miso", "I love jazz.", "I moved to Berlin",
    ]  # fmt: skip


def test_consolidation_is_idempotent_and_never_overturns_newer_episodes(
    mem: AgentMemory, clock: ManualClock
) -> None:
    mem.ingest_round({"user": "I live in Paris.", "timestamp": "2026-01-01T00:00:00Z"})
    clock.advance(days=1)
    mem.ingest_round({"user": "I moved to Rome.", "timestamp": "2026-01-02T00:00:00Z"})
    before = contents(mem.current_facts())
    report = mem.consolidate()
    assert report.episodes == 2 and report.memory_ids == ()
    assert set(report.counts) == {"NOOP"}
    assert contents(mem.current_facts()) == before == ["I moved to Rome."]


def test_consolidation_with_a_stronger_model_adds_what_streaming_missed(
    mem: AgentMemory,
) -> None:
    first = mem.ingest_round({"user": "Long day. Anyway my daughter Mia turned five today!"})
    stronger = ScriptedProvider(
        [json.dumps({"facts": [{"text": "my daughter Mia turned five today",
                                "subject": "Mia", "attribute": "age", "value": "five"}]}),
         json.dumps({"action": "ADD", "target_id": None})]
    )  # fmt: skip
    ctx = mem.default_context
    report = consolidate(mem.runtime, mem.auditor, mem.writer, ctx, backends=Backends.llm(stronger))
    assert report.counts.get("ADD") == 1
    added = mem.get(report.memory_ids[0])
    assert added.provenance.source_episode_id == first.episode.id
    assert added.entity == "Mia"


def test_reflection_flags_contradictions_and_resolves_nothing(
    mem: AgentMemory, clock: ManualClock
) -> None:
    for day, text in enumerate(
        ["I love hiking. I can't eat gluten.", "I love hiking.",
         "I love hiking. I can't eat gluten.", "I live in Paris.", "I moved to Lyon."]
    ):  # fmt: skip
        clock.advance(days=1)
        # a message time may not lie ahead of the server's clock (issue 16): past days
        mem.ingest_round({"user": text, "timestamp": f"2025-12-0{day + 1}T08:00:00Z"})
    a = mem.add("My favorite color is blue.", entity="user")
    b = mem.add("My favorite color is green.", entity="user")
    result = mem.reflect()
    assert [p["statement"] for p in result.stable_preferences] == ["I love hiking."]
    assert len(result.stable_preferences[0]["episodes"]) == 3
    assert [c["statement"] for c in result.stable_constraints] == ["I can't eat gluten."]
    assert [(c["old"], c["new"]) for c in result.changed_beliefs] == [
        ("I live in Paris.", "I moved to Lyon.")
    ]
    [conflict] = result.contradictions_for_review
    assert set(conflict["memory_ids"]) == {a.id, b.id}
    assert mem.get(a.id).is_active and mem.get(b.id).is_active  # flagged, not resolved
    stored = mem.get(result.memory_id or "")
    assert stored.category == "reflection"
    assert stored.metadata["reflection"]["contradictions_for_review"][0]["memory_ids"]
    reviewer = AgentContext(agent_id="rev", role=AgentRole.REVIEWER)
    assert mem.reflect(store=False, context=reviewer).memory_id is None
    with pytest.raises(AccessDenied):
        mem.reflect(context=reviewer)


def test_reflection_sees_a_value_that_came_back(mem: AgentMemory, clock: ManualClock) -> None:
    for text in ["I live in Paris.", "I moved to Rome.", "I moved back to Paris."]:
        clock.advance(days=1)
        mem.ingest_round({"user": text, "timestamp": iso(clock.now_us())})
    flagged = mem.reflect(store=False).contradictions_for_review
    assert [c["kind"] for c in flagged] == ["reverted"]
    assert flagged[0]["values"] == ["Paris", "Rome", "Paris"]


def test_no_stale_triple_after_supersession(mem: AgentMemory) -> None:
    mem.ingest_round({"user": "I live in Paris."})
    mem.ingest_round({"user": "I moved to Berlin."})
    texts = [r.memory.content for r in mem.recall("where does the user live")]
    assert not any("Paris" in t for t in texts)


def test_ingested_memories_are_signed_like_any_write(mem: AgentMemory) -> None:
    from attestor_arango.core.signing import Signer

    mem.signer = Signer.generate()
    result = mem.ingest_round({"user": "I live in Oslo.", "assistant": "Oslo is in Norway."})
    assert len(result.memories) == 2
    assert all(m.signature for m in result.memories)
    assert all(mem.verify_memory(m.id) for m in result.memories)


def test_per_agent_write_limit_counts_ingested_facts(mem: AgentMemory) -> None:
    ctx = AgentContext(agent_id="bot", role=AgentRole.EXECUTOR, max_writes_per_agent=1)
    mem.ingest_round({"user": "I live in Oslo.", "session_id": "s"}, context=ctx)
    assert ctx.writes_made == 1
    with pytest.raises(QuotaExceededError):
        mem.ingest_round({"user": "I work at Equinor."}, context=ctx)
    assert contents(mem.current_facts()) == ["I live in Oslo."]


def test_consolidation_never_lets_an_older_episode_overturn_a_newer_one(
    mem: AgentMemory, clock: ManualClock
) -> None:
    from attestor_arango.ingest import LLMExtractor, RuleResolver

    old_text = "Back then I lived in Paris, life was simple."
    mem.ingest_round({"user": old_text, "timestamp": "2026-01-01T00:00:00Z"})
    clock.advance(days=1)
    newer = mem.ingest_round({"user": "I moved to Rome.", "timestamp": "2026-01-02T00:00:00Z"})
    stronger = ScriptedProvider(
        [
            json.dumps({"facts": [{"text": "I lived in Paris", "attribute": "location",
                                   "value": "Paris", "single_valued": True}]}),
            json.dumps({"facts": [{"text": "I moved to Rome", "attribute": "location",
                                   "value": "Rome", "single_valued": True}]}),
        ]
    )  # fmt: skip
    report = consolidate(
        mem.runtime,
        mem.auditor,
        mem.writer,
        mem.default_context,
        backends=Backends(LLMExtractor(stronger), RuleResolver()),
    )
    assert report.counts == {"NOOP": 2} and report.memory_ids == ()
    assert mem.get(newer.memories[0].id).is_active


def test_configured_llm_endpoint_drives_ingest(tmp_path: object, clock: ManualClock) -> None:
    """``llm:`` in the config is enough: a real OpenAI-compatible server on 127.0.0.1."""
    from pathlib import Path

    from test_ingest_llm_providers import FakeEndpoint, chat

    from attestor_arango.config import Config
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.ids import SeededIdSource

    endpoint = FakeEndpoint()
    facts = {"facts": [{"text": "I live in Lisbon", "attribute": "location", "value": "Lisbon",
                        "single_valued": True}]}  # fmt: skip
    endpoint.plans += [(200, chat(json.dumps(facts)), 0), (200, chat('{"facts": []}'), 0)]
    settings = {"provider": "openai", "model": "tiny", "base_url": endpoint.url + "/v1",
                "retries": 1, "timeout": 5}  # fmt: skip
    config = Config(path=str(Path(str(tmp_path)) / "llm.db"), llm=settings)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=clock,
                      ids=SeededIdSource(3))  # fmt: skip
    try:
        result = mem.ingest_round({"user": "I live in Lisbon now.", "assistant": "Nice city."})
    finally:
        mem.close()
        endpoint.close()
    assert [r["path"] for r in endpoint.requests] == ["/v1/chat/completions"] * 2
    assert "USER MESSAGE" in endpoint.requests[0]["body"]["messages"][-1]["content"]
    assert endpoint.requests[0]["body"]["temperature"] == 0
    [memory] = result.memories
    assert memory.content == "I live in Lisbon"
    assert memory.metadata["ingest"]["decided_by"] == "llm"


def test_resolution_never_crosses_tenants_or_namespaces(mem: AgentMemory) -> None:
    acme = AgentContext(agent_id="a", tenant="acme", namespace="crm")
    other_ns = AgentContext(agent_id="a", tenant="acme", namespace="hr")
    globex = AgentContext(agent_id="g", tenant="globex", namespace="crm")
    mem.ingest_round({"user": "I live in Paris."}, context=globex)
    mem.ingest_round({"user": "I live in Paris."}, context=other_ns)
    result = mem.ingest_round({"user": "I moved to Berlin."}, context=acme)
    assert [d.action for d in result.decisions] == [Action.ADD]
    assert contents(mem.current_facts(context=globex)) == ["I live in Paris."]
    assert contents(mem.current_facts(context=other_ns)) == ["I live in Paris."]


def test_ingested_edges_reach_the_recall_graph_lane(mem: AgentMemory) -> None:
    mem.ingest_round({"user": "I work at Siemens.", "user_name": "Ana"})
    mem.ingest_round({"user": "Siemens builds trains in Krefeld.", "user_name": "Ana"})
    mem.ingest_round({"user": "Bosch makes drills.", "user_name": "Ana"})
    response = mem.recall("What does Ana's employer build?")
    hops = {r.memory.content: r.breakdown.graph_hops for r in response}
    assert hops["Siemens builds trains in Krefeld."] == 1  # ana -works_at-> siemens
    assert hops["I work at Siemens."] == 0
    assert hops.get("Bosch makes drills.") != 1


def test_a_round_reads_a_subjects_active_memories_once(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facts of a round are decided on one state, so the active memories of a subject
    and attribute are read once a round, not once per fact: a round of 200 facts about a
    subject with 2,000 memories read all of them 200 times (~14 s). Counted, not timed."""
    mem.ingest_round({"user": "I like tea. I like cake."})
    reads: list[tuple[str, str]] = []
    real = mem.store.find_active

    def counted(scope, entity, category, view):  # type: ignore[no-untyped-def]
        reads.append((entity, category))
        return real(scope, entity, category, view)

    monkeypatch.setattr(mem.store, "find_active", counted)
    result = mem.ingest_round({"user": "I like jam. I like figs. I like rye. I like kale."})
    assert len(result.decisions) == 4
    assert reads and len(reads) == len(set(reads))
    assert {d.action for d in result.decisions} == {Action.ADD}
    assert {"I like tea.", "I like jam.", "I like kale."} <= set(
        contents(mem.current_facts(entity="user"))
    )
