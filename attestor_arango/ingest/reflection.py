"""Reflection: what stays stable across a user's episodes, what changed, what conflicts.

Stable preferences are patterns asserted in at least ``min_episodes`` separate
episodes; stable constraints are rules the user invoked more than once;
changed beliefs are the supersessions ingest already recorded (old -> new).
Contradictions are only ever flagged for human review: reflection closes,
edits and supersedes nothing it read. The result is stored as one memory
(category ``reflection``) so earlier reflections stay replayable.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from attestor_arango.clock import iso, to_us
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.errors import ValidationError
from attestor_arango.ingest.consolidation import recent_episodes
from attestor_arango.ingest.extract import RuleExtractor
from attestor_arango.ingest.model import Fact
from attestor_arango.ingest.resolve import known
from attestor_arango.ingest.text import value_key
from attestor_arango.models import Memory
from attestor_arango.reports import Reflection
from attestor_arango.scope import TemporalView
from attestor_arango.store.protocol import MemoryFilter
from attestor_arango.validation import check_label, check_text, entity_key

PREFERENCE = re.compile(r"^(?:likes|prefers|favorite_.*|diet|uses)$")
CONSTRAINT = re.compile(
    r"\b(?:can ?not|can't|never|always|must|have to|need to|allergic|avoid|only|do not|don't)\b",
    re.I,
)


def _patterns(
    facts: list[tuple[str, int, Fact]], min_episodes: int, min_constraint: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    groups: dict[tuple[str, str, str, bool], list[tuple[str, Fact]]] = defaultdict(list)
    for episode_id, _, f in facts:
        if f.attribute and f.value:
            key = (entity_key(f.subject), f.attribute, value_key(f.value), f.negated)
            groups[key].append((episode_id, f))
    prefs: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    for (_, attribute, _, negated), hits in sorted(groups.items()):
        episodes = sorted({e for e, _ in hits})
        first = hits[0][1]
        item = {
            "statement": first.text,
            "attribute": attribute,
            "value": first.value,
            "negated": negated,
            "episodes": episodes,
        }
        if PREFERENCE.match(attribute.split(":", 1)[0]) and len(episodes) >= min_episodes:
            prefs.append(item)
        elif any(CONSTRAINT.search(f.text) for _, f in hits) and len(episodes) >= min_constraint:
            rules.append(item)
    return prefs, rules


def _shown(f: Fact) -> str:
    return ("not " if f.negated else "") + (f.value or "")


def _flip_flops(facts: list[tuple[str, int, Fact]]) -> list[dict[str, Any]]:
    """A single-valued attribute that took a value, changed, and came back (A -> B -> A),
    or took two values within one episode."""
    out: list[dict[str, Any]] = []
    series: dict[tuple[str, str], list[tuple[int, str, str, Fact]]] = defaultdict(list)
    for episode_id, at, f in sorted(facts, key=lambda x: x[1]):
        if f.single_valued and f.attribute and f.value:
            value = ("not " if f.negated else "") + value_key(f.value)
            series[(entity_key(f.subject), f.attribute)].append((at, episode_id, value, f))
    for (subject, attribute), points in sorted(series.items()):
        by_episode: dict[str, set[str]] = defaultdict(set)
        for _, episode_id, value, _ in points:
            by_episode[episode_id].add(value)
        for episode_id, values in sorted(by_episode.items()):
            if len(values) > 1:
                out.append({"kind": "same_episode", "subject": subject, "attribute": attribute,
                            "values": sorted(values), "episodes": [episode_id]})  # fmt: skip
        changes = [p for i, p in enumerate(points) if i == 0 or p[2] != points[i - 1][2]]
        sequence = [p[2] for p in changes]
        if len(sequence) != len(set(sequence)):
            out.append({"kind": "reverted", "subject": subject, "attribute": attribute,
                        "values": [_shown(p[3]) for p in changes],
                        "episodes": [p[1] for p in changes],
                        "statements": [p[3].text for p in changes]})  # fmt: skip
    return out


def _active_conflicts(active: list[Memory]) -> list[dict[str, Any]]:
    """Active memories that cannot all be true: one single-valued attribute, several values."""
    groups: dict[tuple[str, str], list[tuple[Memory, str]]] = defaultdict(list)
    for m in active:
        k = known(m, m.entity or "user")
        info = m.metadata.get("ingest") if isinstance(m.metadata, dict) else None
        single = info.get("single_valued") if isinstance(info, dict) else None
        if k.attribute and k.value and k.subject and (single or info is None):
            value = ("not " if k.negated else "") + value_key(k.value)
            groups[(entity_key(k.subject), k.attribute)].append((m, value))
    out = []
    for (subject, attribute), rows in sorted(groups.items()):
        if len({v for _, v in rows}) > 1:
            out.append({"kind": "active_conflict", "subject": subject, "attribute": attribute,
                        "memory_ids": [m.id for m, _ in rows],
                        "statements": [m.content for m, _ in rows]})  # fmt: skip
    return out


def _changed(history: list[Memory], active_ids: set[str]) -> list[dict[str, Any]]:
    by_id = {m.id: m for m in history}
    out = []
    for old in history:
        new = by_id.get(old.superseded_by or "")
        if new is None or old.category == "reflection":
            continue
        if new.content_hash == old.content_hash:
            continue  # the same words said again later: a restatement, not a change
        decision = (new.metadata.get("ingest") or {}).get("decision")
        out.append({"old": old.content, "new": new.content, "old_id": old.id, "new_id": new.id,
                    "decision": decision, "at": iso(to_us(new.t_created)),
                    "evidence_episode_id": new.provenance.source_episode_id,
                    "current": new.id in active_ids})  # fmt: skip
    return out


def reflect(
    rt: Runtime,
    auditor: Auditor,
    writer: Writer,
    ctx: AgentContext,
    *,
    user: str | None = None,
    min_episodes: int = 3,
    limit: int = 500,
    store: bool = True,
) -> Reflection:
    if isinstance(min_episodes, bool) or not isinstance(min_episodes, int) or min_episodes < 1:
        raise ValidationError("min_episodes must be a positive integer")
    label = check_label(user, "user")  # the entity the reflection is kept under
    user = None if label is None else check_text(label, "user")
    scope = ctx.scope
    wanted = None if user is None else entity_key(user)
    newest, _ = recent_episodes(rt, scope, limit, both_sides=False)  # only user texts are read
    episodes = [
        e for e in newest
        if wanted is None or entity_key(str(e.metadata.get("user_name") or "user")) == wanted
    ]  # fmt: skip
    extractor = RuleExtractor()
    facts: list[tuple[str, int, Fact]] = []
    for e in episodes:
        at = to_us(e.user_time)
        label = str(e.metadata.get("user_name") or "user")
        found, _ = extractor.extract(e.user_text, speaker="user", subject=label, anchor_us=at)
        facts += [(e.id, at, f) for f in found]
    prefs, rules = _patterns(facts, min_episodes, min(2, min_episodes))
    view = TemporalView(as_of=rt.clock.now_us(), include_closed=True)
    history = [
        m for m in rt.store.list_memories(scope, MemoryFilter(), view, limit=100_000)
        if m.category != "reflection"
        and (wanted is None or entity_key(m.entity or "") == wanted)
        and (m.metadata.get("ingest") or {}).get("speaker", "user") == "user"
    ]  # fmt: skip
    active = [m for m in history if m.t_expired is None]
    result = Reflection(
        user=user,
        episodes=len(episodes),
        stable_preferences=tuple(prefs),
        stable_constraints=tuple(rules),
        changed_beliefs=tuple(_changed(history, {m.id for m in active})),
        contradictions_for_review=tuple(_active_conflicts(active) + _flip_flops(facts)),
    )
    if not store:
        return result
    # the memory and its audit entry commit together: a crash between them would leave a
    # write the audit chain never recorded (DESIGN.md, governance)
    with writer.together(ctx):
        memory = writer.write(
            ctx,
            content=result.summary(),
            entity=user or "user",
            category="reflection",
            tags=("reflection",),
            confidence=1.0,
            valid_from_us=None,
            valid_until_us=None,
            metadata={"reflection": result.to_dict()},
            source_episode_id=None,
        )
        # counts only: the flagged items quote the subject's statements (see core/audit.py)
        flagged = len(result.contradictions_for_review)
        auditor.record(ctx, "reflection", memory.id, {"flagged_for_review_count": flagged})
    return Reflection(**{**result.__dict__, "memory_id": memory.id})
