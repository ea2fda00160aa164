"""ingest_round: episode first, then speaker-locked extraction, resolution, atomic apply.

The episode is committed on its own before anything is extracted, so the
verbatim evidence survives even when a later step fails (and consolidation can
re-read it). Extraction and resolution read committed state; the decisions are
then applied in one transaction.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from attestor_arango.clock import from_us, to_us
from attestor_arango.context import AgentContext, Permission
from attestor_arango.ingest.apply import apply_decisions
from attestor_arango.ingest.extract import Extractor, LLMExtractor, RuleExtractor
from attestor_arango.ingest.model import Decision, Fact, IngestResult, Speaker, Turn
from attestor_arango.ingest.resolve import LLMResolver, Resolver, RuleResolver
from attestor_arango.llm import LLMProvider, provider_from_settings
from attestor_arango.models import Episode, Memory
from attestor_arango.retrieval import recall
from attestor_arango.scope import Scope, TemporalView

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

CANDIDATES = 8  # similar memories compared per fact
_BUDGET = 100_000


@dataclass(frozen=True)
class Backends:
    """Which extractor and resolver a memory's ingest uses."""

    extractor: Extractor
    resolver: Resolver

    @classmethod
    def rules(cls, label: str = "user") -> Backends:
        return cls(RuleExtractor(), RuleResolver(label))

    @classmethod
    def llm(cls, provider: LLMProvider) -> Backends:
        return cls(LLMExtractor(provider), LLMResolver(provider))


_CONFIGURED: weakref.WeakKeyDictionary[Any, Backends] = weakref.WeakKeyDictionary()


def use_backends(mem: AgentMemory, backends: Backends) -> None:
    """Pins the backends a memory's ingest_round / consolidate use (tests, custom models)."""
    _CONFIGURED[mem] = backends


def backends_for(mem: AgentMemory, *, model_key: str = "model") -> Backends:
    """Pinned backends, else the configured LLM (``llm:`` in the config), else the rules."""
    if model_key == "model" and mem in _CONFIGURED:
        return _CONFIGURED[mem]
    provider = provider_from_settings(mem.config.llm, model_key=model_key)
    chosen = Backends.rules() if provider is None else Backends.llm(provider)
    if model_key == "model":
        _CONFIGURED[mem] = chosen
    return chosen


def candidates_for(mem: AgentMemory, scope: Scope, fact: Fact, view: TemporalView) -> list[Memory]:
    """Active memories on the same subject and attribute, then the pipeline's nearest ones."""
    seen: dict[str, Memory] = {}
    if fact.category:
        for m in mem.store.find_active(scope, fact.subject, fact.category, view):
            seen.setdefault(m.id, m)
    response = recall(
        mem.store, mem.embedder, scope, fact.text, view, _BUDGET, mem.retrieval_config
    )
    for result in list(response.results)[:CANDIDATES]:
        seen.setdefault(result.memory.id, result.memory)
    return list(seen.values())


def store_episode(mem: AgentMemory, ctx: AgentContext, turn: Turn) -> Episode:
    scope = ctx.scope
    now = mem.clock.now_us()
    user_time = now if turn.timestamp is None else to_us(turn.timestamp)
    asst = turn.assistant_timestamp
    episode = Episode(
        id=mem.ids.new_id(now),
        tenant=scope.tenant,
        namespace=scope.require_namespace(),
        session_id=turn.session_id or ctx.session_id,
        agent_id=ctx.agent_id,
        user_text=turn.user,
        assistant_text=turn.assistant,
        user_time=from_us(user_time),
        assistant_time=None if asst is None else asst,
        t_created=from_us(now),
        metadata={"user_name": turn.subject, **turn.metadata},
    )
    with mem.store.transaction():
        mem.store.put_episode(scope, episode)
        mem._audit(ctx, "episode", episode.id, {"session_id": episode.session_id})
    return episode


def extract_round(
    backends: Backends, episode: Episode, subject: str
) -> tuple[list[Fact], list[str]]:
    """User facts from the user text only, assistant facts from the assistant text only."""
    user_at = to_us(episode.user_time)
    asst_at = user_at if episode.assistant_time is None else to_us(episode.assistant_time)
    facts: list[Fact] = []
    warnings: list[str] = []
    sides: tuple[tuple[Speaker, str, int], ...] = (
        ("user", episode.user_text, user_at),
        ("assistant", episode.assistant_text, asst_at),
    )
    for speaker, text, at in sides:
        if text.strip():
            found, notes = backends.extractor.extract(
                text, speaker=speaker, subject=subject, anchor_us=at
            )
            facts += [f for f in found if f.speaker == speaker]
            warnings += notes
    return facts, warnings


def resolve_facts(
    mem: AgentMemory, scope: Scope, backends: Backends, facts: Sequence[Fact], episode_id: str
) -> list[Decision]:
    view = TemporalView(as_of=mem.clock.now_us())
    return [
        backends.resolver.decide(f, candidates_for(mem, scope, f, view), episode_id) for f in facts
    ]


def ingest_round(
    mem: AgentMemory,
    turn: Turn | dict[str, Any],
    ctx: AgentContext,
    *,
    backends: Backends | None = None,
) -> IngestResult:
    ctx.require(Permission.WRITE, "ingest_round")
    parsed = Turn.parse(turn)
    chosen = backends or backends_for(mem)
    # the episode's session becomes the provenance session of what it yields
    run_ctx = ctx if parsed.session_id is None else replace(ctx, session_id=parsed.session_id)
    episode = store_episode(mem, run_ctx, parsed)
    facts, warnings = extract_round(chosen, episode, parsed.subject)
    decisions = resolve_facts(mem, run_ctx.scope, chosen, facts, episode.id)
    try:
        applied, written, notes = apply_decisions(mem, run_ctx, episode, decisions)
    finally:
        if run_ctx is not ctx:
            ctx.writes_made = run_ctx.writes_made
    counts: dict[str, int] = {}
    for d in applied:
        counts[d.action.value] = counts.get(d.action.value, 0) + 1
    return IngestResult(episode, tuple(applied), tuple(written), (*warnings, *notes), counts)
