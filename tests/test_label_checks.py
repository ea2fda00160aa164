"""Adversarial finding: names that become an entity or a session bypassed the label checks.

``ingest_round``'s ``user_name`` and ``reflect``'s ``user`` become the entity of the facts
(and of the reflection) they store, yet a 100,000-character name was stored as an entity
(``add`` stops entities at 256 characters); a ``user_name`` with a lone surrogate was
refused only after the round's episode and its audit entry were written; for ``reflect``
it raised a bare ``UnicodeEncodeError`` and ``reflect(5)`` an ``AttributeError``; ``add_turns``'s
``session_id`` with a lone surrogate raised ``UnicodeEncodeError``. Each is now a
``ValidationError`` that stores nothing (the too-long turn session was already refused
by the context's own check; kept as a guard).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")

CASES: dict[str, Callable[[AgentMemory], object]] = {
    "ingest user_name too long": lambda m: m.ingest_round(
        {"user": "I like green tea", "user_name": "u" * 100_000}, context=CTX
    ),
    "ingest user_name surrogate": lambda m: m.ingest_round(
        {"user": "I like green tea", "user_name": "Ann\ud800"}, context=CTX
    ),
    "reflect user too long": lambda m: m.reflect("u" * 100_000, min_episodes=1, context=CTX),
    "reflect user surrogate": lambda m: m.reflect("Ann\ud800", min_episodes=1, context=CTX),
    "reflect user not a string": lambda m: m.reflect(5, min_episodes=1, context=CTX),  # type: ignore[arg-type]
    "reflect user blank": lambda m: m.reflect("  ", min_episodes=1, context=CTX),
    "turn session surrogate": lambda m: m.add_turns(
        [{"speaker": "Ann", "text": "hello there", "session_id": "s\ud800"}], context=CTX
    ),
    "turn session too long": lambda m: m.add_turns(
        [{"speaker": "Ann", "text": "hello there", "session_id": "s" * 500}], context=CTX
    ),
}


def _state(mem: AgentMemory) -> tuple[object, ...]:
    rows = mem.list(status="all", limit=1000, context=CTX)
    report = mem.verify_audit_chain(context=CTX)
    return [(m.id, m.entity, m.t_expired) for m in rows], report.last_seq, report.last_hash


@pytest.mark.parametrize("case", list(CASES))
def test_a_name_past_the_label_rules_is_refused_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    for text in ("I like green tea", "I like green tea a lot"):
        mem.ingest_round({"user": text, "user_name": "Ann"}, context=CTX)
    before = _state(mem)
    with pytest.raises(ValidationError):
        CASES[case](mem)
    assert _state(mem) == before
    mem.close()


def test_names_within_the_rules_still_work(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path, embedder=HashingEmbedder(64))
    mem.ingest_round({"user": "I like green tea", "user_name": "Ann Lee"}, context=CTX)
    mem.add_turns([{"speaker": "Ann", "text": "hello", "session_id": "s-1"}], context=CTX)
    assert mem.reflect("Ann Lee", min_episodes=1, context=CTX).memory_id
    assert {m.entity for m in mem.list(limit=100, context=CTX)} >= {"Ann Lee", "Ann"}
    mem.close()
