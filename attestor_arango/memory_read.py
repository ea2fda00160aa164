"""AgentMemory's reads: one memory, filtered lists, keyword search, an entity's timeline.

Every read is a replay: ``as_of`` (default now) picks what the memory believed at
that instant, and each row is returned as it was then (``Memory.at``). mypy sees
``self`` in a mixin as the mixin; each method ``cast``s it to the ``AgentMemory`` it
is mixed into, whose helpers it calls.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, cast

from attestor_arango.context import AgentContext, Permission
from attestor_arango.errors import NotFoundError, ValidationError
from attestor_arango.models import Memory
from attestor_arango.store.protocol import MemoryFilter
from attestor_arango.validation import TimeInput, check_label, check_limit, check_tags

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

_STATUSES = {None, "active", "superseded", "archived", "all"}


class ReadMixin:
    """The read methods of ``AgentMemory``, each scoped to the context's tenant and namespace."""

    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> Memory:
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.READ, "get")
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("memory_id must be a non-empty string")
        view = mem._view(as_of)
        found = mem.store.get_memory(mem._scope(ctx), memory_id)
        if found is None or found.us("t_created") > view.as_of:
            raise NotFoundError(f"memory {memory_id} not found in this scope at that time")
        return found.at(view.as_of)

    def list(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        namespace: str | None = None,
        status: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        limit: int = 100,
        offset: int = 0,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Memories as believed at ``as_of`` (default now); status 'all' includes history."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.READ, "list")
        if status not in _STATUSES:
            raise ValidationError(f"status must be one of {sorted(s for s in _STATUSES if s)}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("offset must be a non-negative integer")
        closed = status not in (None, "active")
        view = mem._view(as_of, time_window, include_closed=closed)
        filters = MemoryFilter(
            entity=check_label(entity, "entity"),
            category=check_label(category, "category"),
            tags=check_tags(tags) or None,
            status=None if status in (None, "all") else status,
        )
        rows = mem.store.list_memories(
            mem._scope(ctx, namespace), filters, view, check_limit(limit), offset
        )
        return [m.at(view.as_of) for m in rows]

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        entity: str | None = None,
        category: str | None = None,
        tags: builtins.list[str] | tuple[str, ...] | None = None,
        status: str | None = None,
        time_window: tuple[TimeInput, TimeInput] | None = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Keyword (BM25) search with the same filters as ``list``."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.READ, "search")
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty; pass the words to search for")
        if status not in _STATUSES:
            raise ValidationError(f"status must be one of {sorted(s for s in _STATUSES if s)}")
        limit = check_limit(limit, maximum=1000)
        view = mem._view(as_of, time_window, include_closed=status not in (None, "active"))
        want_tags = set(check_tags(tags))
        ent, cat = check_label(entity, "entity"), check_label(category, "category")
        hits = mem.store.text_candidates(mem._scope(ctx), query, max(limit * 5, 50), view)
        out: builtins.list[Memory] = []
        for hit in hits:
            m = hit.memory.at(view.as_of)
            if ent is not None and m.entity != ent:
                continue
            if cat is not None and m.category != cat:
                continue
            if want_tags and not want_tags & set(m.tags):
                continue
            if status not in (None, "all") and m.status.value != status:
                continue
            out.append(m)
        return out[:limit]

    def timeline(
        self,
        entity: str,
        *,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        """Every version ever stored about an entity, superseded and archived included."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        mem._require(ctx, Permission.READ, "timeline")
        name = check_label(entity, "entity")
        if name is None:
            raise ValidationError("timeline needs an entity")
        view = mem._view(as_of, include_closed=True)
        rows = mem.store.list_memories(
            mem._scope(ctx), MemoryFilter(entity=name), view, limit=10_000
        )
        return [m.at(view.as_of) for m in rows]

    def current_facts(
        self,
        *,
        entity: str | None = None,
        category: str | None = None,
        as_of: TimeInput | None = None,
        context: AgentContext | None = None,
    ) -> builtins.list[Memory]:
        mem = cast("AgentMemory", self)
        return mem.list(
            entity=entity, category=category, as_of=as_of, limit=10_000, context=context
        )
