"""A seeded store for the Evidence Board tests: two tenants, history, episodes, a purge.

Everything is written through AgentMemory's public methods with an injected clock,
so the times (and what an as_of replay must show) are known to the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from attestor_arango.clock import ManualClock, iso, to_us
from attestor_arango.config import Config, SigningSettings, TraceSettings
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SCRIPT = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
KEY_A, KEY_B, KEY_A_NS = "ui-key-acme", "ui-key-beta", "ui-key-acme-inbox"


@dataclass
class Seed:
    memory: AgentMemory
    clock: ManualClock
    keys: KeyRing
    # instants the tests replay at, as ISO strings
    before_move: str = ""
    after_move: str = ""
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def trace_path(self) -> Path:
        return Path(str(self.memory.config.trace.path))


def keyring() -> KeyRing:
    def key(kid: str, plain: str, tenant: str, **more: object) -> ApiKey:
        return ApiKey.model_validate(
            {
                "id": kid,
                "sha256": hash_key(plain),
                "tenant": tenant,
                "roles": ("orchestrator", "reviewer"),
                "agent_ids": ("planner-1", "*"),
                **more,
            }
        )

    return KeyRing(
        [
            key("acme", KEY_A, "acme"),
            key("beta", KEY_B, "beta"),
            key("acme-inbox", KEY_A_NS, "acme", namespaces=("inbox",)),
        ]
    )


def seed(tmp: Path) -> Seed:
    clock = ManualClock(START)
    # recall traces on, with the query text, so a recorded recall can be replayed exactly
    trace = TraceSettings(enabled=True, path=str(tmp / "trace.jsonl"), include_content=True)
    config = Config(path=str(tmp / "board.db"), signing=SigningSettings(enabled=True), trace=trace)
    mem = AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(3)
    )
    s = Seed(memory=mem, clock=clock, keys=keyring())
    planner = AgentContext(agent_id="planner-1", role="planner", tenant="acme")
    researcher = AgentContext(
        agent_id="researcher-7",
        role="researcher",
        tenant="acme",
        parent_agent_id="planner-1",
        agent_trail=("orchestrator-0", "planner-1", "researcher-7"),
        session_id="sess-42",
    )
    boss = AgentContext(agent_id="orchestrator-0", role="orchestrator", tenant="acme")

    # data that is then erased, so the audit page has a purge record with counts
    for i in range(3):
        mem.add(f"temporary note {i}", entity="scratch", context=planner)
        clock.advance(seconds=10)
    mem.purge_user("acme", "GDPR erasure request #7", context=boss)
    clock.advance(days=1)

    first = mem.add(
        "Alice lives in Paris",
        entity="Alice",
        category="residence",
        tags=["person"],
        valid_from="2025-06-01T00:00:00Z",
        context=planner,
    )
    s.ids["paris"] = first.id
    clock.advance(days=1)
    s.before_move = iso(clock.now_us()) or ""
    clock.advance(days=1)
    second = mem.add(
        "Alice lives in Berlin",
        entity="Alice",
        category="residence",
        tags=["person"],
        valid_from="2026-03-03T00:00:00Z",
        context=researcher,
    )
    s.ids["berlin"] = second.id
    clock.advance(seconds=30)
    s.after_move = iso(clock.now_us()) or ""
    hostile = mem.add(SCRIPT, entity="Mallory", category="note", context=planner)
    s.ids["script"] = hostile.id
    for i in range(60):
        mem.add(
            f"Project Orion status report {i}: milestone {i % 7} reviewed by the team",
            entity=f"orion-{i % 5}",
            category=f"status-{i}",
            tags=["orion"],
            context=planner,
        )
        clock.advance(seconds=5)
    ingested = mem.ingest_round(
        {
            "user": "My name is Bob and I work at Initech as a data engineer.",
            "assistant": "Noted, Bob.",
            "session_id": "sess-9",
            "user_name": "Bob",
        },
        context=researcher,
    )
    s.ids["episode"] = ingested.episode.id
    s.ids["ingested"] = ingested.memories[0].id if ingested.memories else ""
    s.ids["episode_text"] = ingested.episode.user_text
    forgotten = mem.add("Orion launch is on Friday", entity="orion-x", context=boss)
    clock.advance(seconds=5)
    mem.forget(forgotten.id, reason="wrong date", context=boss)
    s.ids["forgotten"] = forgotten.id

    beta = AgentContext(agent_id="planner-1", role="planner", tenant="beta")
    secret = mem.add("Beta secret: the vault code is 7781", entity="Vault", context=beta)
    s.ids["beta"] = secret.id
    clock.advance(seconds=5)
    return s


def as_of_now(s: Seed) -> str:
    return iso(s.clock.now_us()) or ""


def us(text: str) -> int:
    return to_us(datetime.fromisoformat(text.replace("Z", "+00:00")))
