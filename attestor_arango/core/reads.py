"""Reads as replays: one memory, filtered lists, keyword search, an entity's timeline.

Every read picks what the memory believed at the view's ``as_of`` and returns each
row as it was then (``Memory.at``). ``AgentMemory`` has checked the permission and
validated the arguments; these functions only read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from attestor_arango.clock import parse_time
from attestor_arango.context import AgentContext
from attestor_arango.core.paging import all_memories
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import NotFoundError, ValidationError
from attestor_arango.models import Episode, Memory, Stats
from attestor_arango.retrieval.text_lane import decoded, rescore_pool, scores_follow_view
from attestor_arango.scope import Scope, TemporalView, chosen_namespace
from attestor_arango.store.protocol import MemoryFilter, TextHit
from attestor_arango.validation import (
    TagsInput,
    TimeInput,
    Window,
    check_label,
    check_query_size,
    check_tags,
    check_window,
)

STATUSES = frozenset({"active", "superseded", "archived", "all"})
TIMELINE_LIMIT = 10_000
SHORT_ID_MIN = 4  # fewer characters than this are never looked up as a short id
# up to a whole id (36 characters): a full id in capitals or with spaces around it is
# looked up as the lower-case id it spells (UUIDs are read case-insensitively)
_SHORT_ID = re.compile(rf"[0-9a-f-]{{{SHORT_ID_MIN},36}}")
_SHOWN_MATCHES = 10
FILTER_PAGE = 5_000  # rows per store call while a filtered search gathers its candidates


def check_status(status: object) -> str | None:
    """``status`` for a store filter (None for any); raises ``ValidationError`` for anything
    but one of ``STATUSES`` (a list or a mapping included: the library is called with
    whatever a caller holds, and ``in`` on a set would raise ``TypeError`` for those)."""
    if status is not None and (not isinstance(status, str) or status not in STATUSES):
        raise ValidationError(f"status must be one of {sorted(STATUSES)}")
    return None if status in (None, "all") else status


def memory_filter(
    entity: str | None,
    category: str | None,
    tags: list[str] | tuple[str, ...] | None,
    status: str | None,
) -> MemoryFilter:
    """The store filter of a read's arguments; raises ``ValidationError`` for a bad label."""
    return MemoryFilter(
        entity=check_label(entity, "entity"),
        category=check_label(category, "category"),
        tags=check_tags(tags) or None,
        status=status,
    )


@dataclass(frozen=True)
class Listing:
    """The filters ``list``, ``count``, ``list_page`` and ``search`` share, as given."""

    entity: str | None = None
    category: str | None = None
    tags: TagsInput = None
    namespace: str | None = None
    status: str | None = None
    time_window: Window = None
    as_of: TimeInput | None = None

    def arguments(self, default_namespace: str) -> dict[str, Any]:
        """The filters by their argument names, each as the read resolves it (what a
        ``list_page`` cursor digests): times as the microseconds they mean, labels and tags
        as stored, so two spellings of one instant or name (``...Z`` and ``...+00:00``, a
        datetime, epoch seconds) give one digest. Raises ``ValidationError`` for an argument
        the read would refuse (the namespace too, ``default_namespace`` naming the one
        an empty name is refused in favour of)."""
        check_status(self.status)
        return {
            "entity": check_label(self.entity, "entity"),
            "category": check_label(self.category, "category"),
            "tags": list(check_tags(self.tags)),
            "namespace": None
            if self.namespace is None
            else chosen_namespace(self.namespace, default_namespace),
            "status": self.status,
            "time_window": check_window(self.time_window),
            "as_of": None if self.as_of is None else parse_time(self.as_of, field="as_of"),
        }

    def resolve(self, rt: Runtime, ctx: AgentContext) -> tuple[Scope, MemoryFilter, TemporalView]:
        """The scope, store filter and view; raises ``ValidationError`` for an unknown
        status, a bad label or window, or an ``as_of`` in the future."""
        wanted = check_status(self.status)
        closed = self.status not in (None, "active")
        view = rt.view(self.as_of, self.time_window, include_closed=closed)
        filters = memory_filter(self.entity, self.category, self.tags, wanted)
        return rt.scope(ctx, self.namespace), filters, view


def list_matching(
    rt: Runtime, ctx: AgentContext, listing: Listing, limit: int, offset: int = 0
) -> list[Memory]:
    """``list``: the rows ``listing`` admits, each as it was at its ``as_of``."""
    scope, filters, view = listing.resolve(rt, ctx)
    return list_memories(rt, scope, filters, view, limit, offset)


def count_matching(rt: Runtime, ctx: AgentContext, listing: Listing) -> int:
    """``count``: how many rows ``list_matching`` pages through with the same listing."""
    scope, filters, view = listing.resolve(rt, ctx)
    return count_memories(rt, scope, filters, view)


def search_matching(
    rt: Runtime, ctx: AgentContext, query: str | None, listing: Listing, limit: int
) -> list[Memory]:
    """``search``: ``search_memories`` over what ``listing`` admits."""
    scope, filters, view = listing.resolve(rt, ctx)
    return search_memories(rt, scope, query, filters, view, limit)


def current_facts(rt: Runtime, ctx: AgentContext, listing: Listing) -> list[Memory]:
    """``current_facts``: active rows of ``listing``, without the verbatim rounds unless its
    category asks for them."""
    rows = list_matching(rt, ctx, listing, TIMELINE_LIMIT)
    return rows if listing.category is not None else facts_only(rows)


def timeline(
    rt: Runtime,
    scope: Scope,
    entity: str | None,
    as_of: TimeInput | None,
    time_window: Window,
) -> list[Memory]:
    """Every version stored about ``entity`` (closed ones included) that ``time_window``
    admits; raises ``ValidationError`` without an entity."""
    if entity is None:
        raise ValidationError("timeline needs an entity")
    view = rt.view(as_of, time_window, include_closed=True)
    return list_memories(rt, scope, MemoryFilter(entity=entity), view, TIMELINE_LIMIT)


def check_query(query: object, max_chars: int) -> str | None:
    """A keyword search's query: words (at most ``max_chars`` characters, as recall's), or
    None for a filtered search; never blank. Raises ``ValidationError`` otherwise."""
    if query is None:
        return None
    if not isinstance(query, str) or not query.strip():
        raise ValidationError(
            "query is empty; pass the words to search for, or omit it for a filtered search"
        )
    return check_query_size(query, max_chars)


def facts_only(rows: list[Memory]) -> list[Memory]:
    """Rows without the verbatim rounds ``ingest_round`` keeps (category and tag
    ``episode``): records, not facts."""
    return [m for m in rows if not (m.category == "episode" and "episode" in m.tags)]


def health(rt: Runtime) -> dict[str, Any]:
    """The store's health report without its location (the report reaches every key holder
    over REST and MCP), plus the embedder in use; ``StoreError`` if the store cannot say."""
    report = {k: v for k, v in rt.store.health().items() if k not in ("path", "url")}
    report["embedder"] = {"name": rt.embedder.name, "dimension": rt.embedder.dimension}
    return report


def resolve_id(rt: Runtime, scope: Scope, memory_id: str, created_by: int | None = None) -> str:
    """A full id, or the one id of the scope that starts or ends with ``memory_id``
    (stripped and lower-cased: a UUID is read case-insensitively).

    People copy ids from tables, which show the last 8 characters (the random part of
    a UUIDv7), or the first ones. A replay passes its ``as_of`` as ``created_by``: the
    short id is resolved against the rows that existed then, so a row written later
    neither makes it ambiguous nor is named. Raises ``NotFoundError`` when nothing
    matches and ``ValidationError`` naming the matches when several do.
    """
    if rt.store.get_memory(scope, memory_id) is not None:
        return memory_id
    fragment = memory_id.strip().lower()
    if not _SHORT_ID.fullmatch(fragment):
        return memory_id  # not a short id: the read reports it not found
    matches = rt.store.memory_ids_matching(scope, fragment, _SHOWN_MATCHES + 1, created_by)
    if len(matches) == 1:
        return matches[0]
    if not matches and len(fragment) == 36:  # a whole id: the read says it is not found
        return memory_id
    if not matches:
        raise NotFoundError(f"no memory id in this scope starts or ends with {memory_id!r}")
    more = " and more" if len(matches) > _SHOWN_MATCHES else ""
    raise ValidationError(
        f"{memory_id!r} matches several memory ids: "
        f"{', '.join(matches[:_SHOWN_MATCHES])}{more}; give more characters of the one you mean",
    )


def get_memory(rt: Runtime, scope: Scope, memory_id: str, view: TemporalView) -> Memory:
    """The memory as it was at ``view.as_of``; raises ``NotFoundError`` if it did not exist."""
    found = rt.store.get_memory(scope, memory_id)
    if found is None or found.us("t_created") > view.as_of:
        raise NotFoundError(f"memory {memory_id} not found in this scope at that time")
    if view.window is not None:
        start, end = found.us("valid_from"), found.us("valid_until")
        if not (start < view.window_end and end > view.window_start):
            raise NotFoundError(
                f"memory {memory_id} exists but was not valid in that time_window "
                "(its valid_from/valid_until do not overlap it)"
            )
    return found.at(view.as_of)


def list_memories(
    rt: Runtime,
    scope: Scope,
    filters: MemoryFilter,
    view: TemporalView,
    limit: int,
    offset: int = 0,
) -> list[Memory]:
    """Rows matching ``filters`` in ``view``, each as it was at ``view.as_of``."""
    rows = rt.store.list_memories(scope, filters, view, limit, offset)
    return [m.at(view.as_of) for m in rows]


def count_memories(rt: Runtime, scope: Scope, filters: MemoryFilter, view: TemporalView) -> int:
    """How many rows ``list_memories`` pages through with the same filters and view."""
    return rt.store.count_memories(scope, filters, view)


def get_episode(rt: Runtime, scope: Scope, episode_id: str) -> Episode:
    """A stored conversation round, verbatim; raises ``NotFoundError`` outside the scope."""
    found = rt.store.get_episode(scope, episode_id)
    if found is None:
        raise NotFoundError(f"episode {episode_id} not found in this scope")
    return found


def search_memories(
    rt: Runtime,
    scope: Scope,
    query: str | None,
    filters: MemoryFilter,
    view: TemporalView,
    limit: int,
) -> list[Memory]:
    """Keyword search; without a query, the filtered list (Attestor's ``search()``).

    With no filter the text pool answers, in the order of BM25 over what the view sees:
    the index's own when it scores so, else the pool re-scored (``scores_follow_view``),
    so another tenant's rows and later rows never reorder it. With an entity, category, tag or
    non-active status filter, the store narrows the candidates first (the same filtered
    query ``list`` runs, on both backends) and BM25 ranks every row that passed, so a
    match is never lost below a cut taken over the whole scope.
    """
    if query is None:
        return list_memories(rt, scope, filters, view, limit)
    pool: list[TextHit]
    if filters == MemoryFilter() or filters == MemoryFilter(status="active"):
        pool = rt.store.text_pool(scope, query, max(limit * 5, 50), view)
        if not scores_follow_view(rt.store):  # index-wide statistics: other tenants, later rows
            pool = rescore_pool(pool, query)
        found = decoded(rt.store, scope, pool, {})
        return [m.at(view.as_of) for m in found.memories[:limit]]
    pool = []
    rows: dict[str, Memory] = {}
    for m in all_memories(rt.store, scope, filters, view, FILTER_PAGE):
        rows[m.id] = m
        pool.append(TextHit(m.id, m.content, m.us("t_created"), 0.0))
    ranked = rescore_pool(pool, query)[:limit]
    return [rows[t.id].at(view.as_of) for t in ranked]


def stats(rt: Runtime, scope: Scope) -> Stats:
    """Row counts of a scope and its tenant's embedding space; raises ``StoreError``."""
    counts = rt.store.count_rows(scope)
    space = rt.store.get_embedding_space(scope)
    return Stats(
        tenant=scope.tenant,
        namespace=scope.namespace,
        total=counts["total"],
        active=counts["active"],
        superseded=counts["superseded"],
        archived=counts["archived"],
        episodes=counts["episodes"],
        entities=counts["entities"],
        relations=counts["relations"],
        audit_entries=counts["audit"],
        embedder=space.name if space else None,
        dimension=space.dimension if space else None,
    )
