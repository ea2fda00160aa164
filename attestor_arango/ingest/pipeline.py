"""ingest_round: episode first, then speaker-locked extraction, resolution, atomic apply.

What the facts do not say of the round is kept as one verbatim memory beside them
(ingest/verbatim.py), so recall finds every round.

Extraction and resolution read committed state; the episode and the decisions
are then applied in one transaction, so a write refused part-way (a quota spent)
stores nothing. When extraction or resolution fails (a model down), the episode is
committed on its own before the error is raised, so the verbatim evidence survives
(and consolidation can re-read it).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from dataclasses import dataclass, replace
from typing import Any

from attestor_arango.clock import check_not_ahead, from_us, to_us
from attestor_arango.config import Config
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.quota import check_quota
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.errors import ValidationError
from attestor_arango.ids import new_salt
from attestor_arango.ingest.apply import apply_decisions
from attestor_arango.ingest.extract import Extractor, LLMExtractor, RuleExtractor
from attestor_arango.ingest.labels import screen_facts
from attestor_arango.ingest.model import Decision, Fact, IngestResult, Speaker, Turn
from attestor_arango.ingest.resolve import LLMResolver, Resolver, RuleResolver
from attestor_arango.ingest.verbatim import write_verbatim
from attestor_arango.llm import LLMProvider, provider_from_settings
from attestor_arango.models import Episode, Memory
from attestor_arango.retrieval import recall
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.validation import entity_key

CANDIDATES = 8  # similar memories compared per fact
_BUDGET = 100_000
# facts one round may yield: each goes through add's write path under the store's write
# lock and reads the entity's rows (the round's earlier facts among them), so a round's
# cost grows with the square of its facts; a 30,000-character turn of "I like X." said
# 2,000 times held the lock, every tenant waiting, for over three minutes. Spoken rounds
# yield a handful.
MAX_FACTS_PER_ROUND = 200
# distinct graph entities one round may name (its facts' entities, relation ends and
# memory entities): each is an upsert under the same lock, and the rules read every name
# of "I met Ann, Bob, ..." as one, so a 30,000-character turn named thousands
MAX_ENTITIES_PER_ROUND = 1_000
# relations one round may write (a row each, under the same lock): a model's answer can name
# any number between two names, so the entity limit alone does not bound them
MAX_RELATIONS_PER_ROUND = 1_000


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


def backends_for(config: Config, *, model_key: str = "model") -> Backends:
    """The configured LLM (``llm:`` in the config, ``model_key`` naming the model), else rules."""
    provider = provider_from_settings(config.llm, model_key=model_key)
    return Backends.rules() if provider is None else Backends.llm(provider)


class ConfiguredBackends:
    """The backends of a config's ``llm`` settings, kept while those settings stay as they
    were: a memory builds its LLM provider once, yet follows ``mem.config.llm`` (or a new
    config) changed later, where a backend kept for good would ignore the change."""

    def __init__(self) -> None:
        self._settings: dict[str, Any] = {}
        self._backends: Backends | None = None

    def of(self, config: Config) -> Backends:
        settings = config.llm
        if self._backends is None or settings != self._settings:
            self._backends = backends_for(config)
            self._settings = deepcopy(settings)  # a later change in place differs from it
        return self._backends


def candidates_for(
    rt: Runtime,
    scope: Scope,
    fact: Fact,
    view: TemporalView,
    active: dict[tuple[str, str], list[Memory]] | None = None,
) -> list[Memory]:
    """Active memories on the same subject and attribute, then the pipeline's nearest ones.

    ``active``: the active memories already read for this view, by (entity, category); the
    facts of one round are decided on one state, and a round of 200 facts about one
    subject read its 2,000 memories 200 times."""
    seen: dict[str, Memory] = {}
    if fact.category:
        held = {} if active is None else active
        for entity in dict.fromkeys((fact.subject, fact.entity)):
            key = (entity, fact.category)
            if key not in held:
                held[key] = rt.store.find_active(scope, entity, fact.category, view)
            for m in held[key]:
                seen.setdefault(m.id, m)
    response = recall(rt.store, rt.embedder, scope, fact.text, view, _BUDGET, rt.retrieval_config)
    for result in list(response.results)[:CANDIDATES]:
        seen.setdefault(result.memory.id, result.memory)
    return list(seen.values())


def new_episode(rt: Runtime, ctx: AgentContext, turn: Turn) -> Episode:
    """The verbatim round as an episode, not yet stored (``keep_episode`` stores it)."""
    scope = ctx.scope
    now = rt.clock.now_us()
    user_time = now if turn.timestamp is None else to_us(turn.timestamp)
    asst = turn.assistant_timestamp
    return Episode(
        id=rt.ids.new_id(now),
        tenant=scope.tenant,
        namespace=scope.require_namespace(),
        session_id=turn.session_id or ctx.session_id,
        agent_id=ctx.agent_id,
        user_text=turn.user,
        assistant_text=turn.assistant,
        user_time=from_us(user_time),
        assistant_time=None if asst is None else asst,
        t_created=from_us(now),
        # the checked name wins over one the caller's metadata gives: consolidation and
        # reflection read the round's subject from here
        metadata={**turn.metadata, "user_name": turn.subject},
    )


def keep_episode(rt: Runtime, auditor: Auditor, ctx: AgentContext, episode: Episode) -> Episode:
    """Stores the episode, stamped with the moment it is stored (inside the caller's
    transaction, if any), and audits it; returns it as stored."""
    with rt.store.transaction():
        stamp = {"t_created": from_us(rt.clock.now_us()), "salt": new_salt(rt.ids)}
        kept = episode.model_copy(update=stamp)
        rt.store.put_episode(ctx.scope, kept)
        # the session id names the conversation (often the person): kept as a digest keyed
        # by the episode's salt, so it confirms no guess once the episode is erased
        auditor.record(ctx, "episode", kept.id, {"session_id": kept.session_id}, salt=kept.salt)
    return kept


def extract_round(
    backends: Backends, episode: Episode, subject: str, max_chars: int
) -> tuple[list[Fact], list[str]]:
    """User facts from the user text only, assistant facts from the assistant text only,
    held to ``add``'s checks (``labels.screen_facts``: a fact's words at most ``max_chars``
    characters); the warnings say what was dropped."""
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
            kept, dropped = screen_facts([f for f in found if f.speaker == speaker], max_chars)
            facts += kept
            warnings += [*notes, *dropped]
    return facts, warnings


def round_too_large(facts: Sequence[Fact]) -> str | None:
    """Why a round's facts are too many to resolve and apply (``MAX_FACTS_PER_ROUND``), or
    name too many graph entities (``MAX_ENTITIES_PER_ROUND``) or relations
    (``MAX_RELATIONS_PER_ROUND``), or None when none is."""
    if len(facts) > MAX_FACTS_PER_ROUND:
        return (
            f"the round yields {len(facts)} facts, over the limit of {MAX_FACTS_PER_ROUND} a "
            "round; send the conversation as several rounds (or store it verbatim with "
            "add_turns)"
        )
    names = {
        entity_key(name)
        for f in facts
        for name in (f.entity, *f.entities, *(end for s, _, t in f.relations for end in (s, t)))
    }
    names.discard("")
    if len(names) > MAX_ENTITIES_PER_ROUND:
        return (
            f"the round names {len(names)} entities, over the limit of "
            f"{MAX_ENTITIES_PER_ROUND} a round; send the conversation as several rounds (or "
            "store it verbatim with add_turns)"
        )
    relations = sum(len(set(f.relations)) for f in facts)
    if relations > MAX_RELATIONS_PER_ROUND:
        return (
            f"the round names {relations} relations, over the limit of "
            f"{MAX_RELATIONS_PER_ROUND} a round; send the conversation as several rounds (or "
            "store it verbatim with add_turns)"
        )
    return None


def resolve_facts(
    rt: Runtime, scope: Scope, backends: Backends, facts: Sequence[Fact], episode_id: str
) -> list[Decision]:
    view = TemporalView(as_of=rt.clock.now_us())
    active: dict[tuple[str, str], list[Memory]] = {}  # every fact sees the same state
    return [
        backends.resolver.decide(f, candidates_for(rt, scope, f, view, active), episode_id)
        for f in facts
    ]


def ingest_round(
    rt: Runtime,
    auditor: Auditor,
    writer: Writer,
    turn: Turn | dict[str, Any],
    ctx: AgentContext,
    *,
    backends: Backends,
) -> IngestResult:
    """Episode, extraction, resolution, atomic apply; the caller checked WRITE permission.

    Raises ``ValidationError`` for a malformed turn or one that yields more than
    ``MAX_FACTS_PER_ROUND`` facts or names more than ``MAX_ENTITIES_PER_ROUND`` entities
    or ``MAX_RELATIONS_PER_ROUND`` relations (before anything is stored) and what the
    write path raises (``QuotaExceededError``, ``StoreError``).
    """
    parsed = Turn.parse(turn)
    # quota and the agent's write limit before anything is stored: a refused round stores
    # no episode either (the write path checks again, inside its transaction, per fact)
    now = rt.clock.now_us()
    for name, at in (
        ("timestamp", parsed.timestamp),
        ("assistant_timestamp", parsed.assistant_timestamp),
    ):
        if at is not None:
            check_not_ahead(to_us(at), now, field=name)  # a message cannot come from the future
    check_quota(rt, ctx, ctx.scope, now)
    chosen = backends
    # the episode's session becomes the provenance session of what it yields
    run_ctx = ctx if parsed.session_id is None else replace(ctx, session_id=parsed.session_id)
    episode = new_episode(rt, run_ctx, parsed)
    # decide on committed state, then apply under the write lock; if anything was written in
    # the tenant meanwhile (its chain head moved), decide again under the lock, so concurrent
    # rounds about one subject serialise and a single-valued fact keeps one current value
    head = rt.store.audit_head(Scope(ctx.tenant))
    try:
        facts, warnings = extract_round(
            chosen, episode, parsed.subject, rt.config.max_content_chars
        )
        too_many = round_too_large(facts)
        decisions = [] if too_many else resolve_facts(rt, run_ctx.scope, chosen, facts, episode.id)
    except Exception:
        keep_episode(rt, auditor, run_ctx, episode)  # the evidence outlives a failed model
        raise
    if too_many:  # refused whole, before anything (the episode included) is stored
        raise ValidationError(too_many)
    # the episode commits with its facts: a write refused part-way (a quota spent) stores
    # neither, so a round over quota cannot leave episodes behind, however often it is sent
    with writer.together(ctx):
        if rt.store.audit_head(Scope(ctx.tenant)) != head:
            decisions = resolve_facts(rt, run_ctx.scope, chosen, facts, episode.id)
        episode = keep_episode(rt, auditor, run_ctx, episode)
        applied, written, notes = apply_decisions(rt, auditor, writer, run_ctx, episode, decisions)
        verbatim = write_verbatim(writer, run_ctx, episode, facts, parsed.subject)
    counts: dict[str, int] = {}
    for d in applied:
        counts[d.action.value] = counts.get(d.action.value, 0) + 1
    return IngestResult(
        episode, tuple(applied), tuple(written), (*warnings, *notes), counts, verbatim
    )
