"""Sleep-time consolidation: re-read recent episodes and resolve their facts again.

Useful after the streaming path ran with the rules (or a small model): with a
stronger model configured as ``llm.consolidation_model`` the same episodes
yield better facts, resolved by the same four-decision resolver and applied
through the same write path. Re-reading is idempotent, and an old episode can
never overturn what a newer one established.
"""

from __future__ import annotations

from dataclasses import replace

from attestor_arango.clock import to_us
from attestor_arango.context import AgentContext, Permission
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.errors import ValidationError
from attestor_arango.ingest.apply import apply_decisions
from attestor_arango.ingest.model import Action, Decision
from attestor_arango.ingest.pipeline import (
    Backends,
    backends_for,
    extract_round,
    resolve_facts,
    round_too_large,
)
from attestor_arango.models import Episode, Memory, content_hash
from attestor_arango.reports import ConsolidationReport
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter

# characters of episode text one consolidate or reflect re-reads (rule extraction takes
# ~8.5 us a character: ~9 s); reflect's 500 rounds of 2,000 characters fit
EPISODE_TEXT_BUDGET = 1_000_000
_PAGE = 100  # episodes read at a time, newest first


def recent_episodes(
    rt: Runtime, scope: Scope, limit: int, *, both_sides: bool = True
) -> tuple[list[Episode], bool]:
    """The newest episodes of the scope, oldest first: at most ``limit``, and only while
    their texts (the user's, and the assistant's with ``both_sides``) total at most
    ``EPISODE_TEXT_BUDGET`` characters (the newest is always read), and whether the budget
    left older ones out. Read newest first a page at a time, so a scope of 100,000 rounds
    is not loaded to keep the last few."""
    kept: list[Episode] = []
    total = 0
    while len(kept) < limit:
        want = min(_PAGE, limit - len(kept))
        page = rt.store.list_episodes(scope, want, len(kept), newest_first=True)
        for episode in page:
            total += len(episode.user_text) + (len(episode.assistant_text) if both_sides else 0)
            if kept and total > EPISODE_TEXT_BUDGET:
                return kept[::-1], True
            kept.append(episode)
        if len(page) < want:
            break
    return kept[::-1], False


def _episode_time(rt: Runtime, scope: Scope, memory: Memory) -> int | None:
    source = memory.provenance.source_episode_id
    ep = rt.store.get_episode(scope, source) if source else None
    return None if ep is None else to_us(ep.user_time)


def _guard(rt: Runtime, scope: Scope, episode: Episode, d: Decision) -> Decision:
    """No resurrection of what this episode already yielded, no overturning newer evidence."""
    noop = Action.NOOP
    view = TemporalView(as_of=rt.clock.now_us(), include_closed=True)
    same = rt.store.list_memories(
        scope, MemoryFilter(content_hash=content_hash(d.fact.text)), view, limit=50
    )
    if any(m.provenance.source_episode_id == episode.id for m in same):
        return replace(d, action=noop, reason="already extracted from this episode")
    if d.target_id and d.action in (Action.UPDATE, Action.INVALIDATE):
        target = rt.store.get_memory(scope, d.target_id)
        newer = None if target is None else _episode_time(rt, scope, target)
        if newer is not None and newer > to_us(episode.user_time):
            return replace(d, action=noop, reason="a newer episode already holds the current value")
    return d


def consolidate(
    rt: Runtime,
    auditor: Auditor,
    writer: Writer,
    ctx: AgentContext,
    *,
    limit: int = 50,
    backends: Backends | None = None,
) -> ConsolidationReport:
    ctx.require(Permission.WRITE, "consolidate")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ValidationError("limit must be an integer between 1 and 10000 episodes")
    chosen = backends or backends_for(rt.config, model_key="consolidation_model")
    scope = ctx.scope
    episodes, cut = recent_episodes(rt, scope, limit)
    counts: dict[str, int] = {}
    ids: list[str] = []
    warnings: list[str] = []
    if cut:
        warnings.append(
            f"older episodes left out: the {len(episodes)} newest fill the "
            f"{EPISODE_TEXT_BUDGET:,} characters of text one consolidate re-reads"
        )
    for episode in episodes:
        subject = str(episode.metadata.get("user_name") or "user")
        facts, notes = extract_round(chosen, episode, subject, rt.config.max_content_chars)
        too_many = round_too_large(facts)
        if too_many:  # ingest_round refuses such a round; one stored before is not re-read
            warnings.append(f"episode {episode.id} skipped: {too_many}")
            continue
        decisions = [
            _guard(rt, scope, episode, d)
            for d in resolve_facts(rt, scope, chosen, facts, episode.id)
        ]
        written: list[Memory] = []
        more: list[str] = []
        if all(d.action is Action.NOOP for d in decisions):
            applied = decisions
        else:
            applied, written, more = apply_decisions(rt, auditor, writer, ctx, episode, decisions)
        for d in applied:
            counts[d.action.value] = counts.get(d.action.value, 0) + 1
        ids += [m.id for m in written]
        warnings += [*notes, *more]
    auditor.record(ctx, "consolidate", None, {"episodes": len(episodes), "counts": counts})
    return ConsolidationReport(len(episodes), counts, tuple(ids), tuple(warnings))
