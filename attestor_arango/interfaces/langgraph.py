"""LangGraph ``BaseStore`` over AgentMemory: LangGraph agents get governed memory unchanged.

Install with the ``langgraph`` extra. How the store's operations map:

- a namespace tuple ``("users", "alice")`` is the AgentMemory namespace
  ``<root>/users/alice`` of the context's tenant (``root`` defaults to the
  context's namespace); labels are names (letters, digits, ``._:@-``), no ``/``.
  A namespace is a scope identifier: the audit chain keeps it verbatim, also after
  ``purge_user`` erased the tenant (its report's ``kept["audit_chain"]``), so use an
  id there, not a person's name;
- ``put(ns, key, value)`` is ``add``: the value's text is the memory's content, the
  value itself rides in ``metadata``, the key is the entity. Putting the same key
  again supersedes the previous version (it stays readable with ``as_of`` and in
  the audit log), so nothing is overwritten in place;
- ``delete(ns, key)`` is ``forget`` (the context needs the FORGET permission);
- ``get`` reads the active version; ``search`` with a ``query`` is ``recall``
  (ranked, deterministic) and without one is ``list``, both with the value
  ``filter`` applied after; ``list_namespaces`` reads the store's own index of
  namespaces that hold an item.

Every call acts as the store's AgentContext: its tenant, role and budgets apply,
as for any library caller. ``as_of`` makes a read-only view of a past moment.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from attestor_arango.context import AgentContext
from attestor_arango.errors import ValidationError
from attestor_arango.scope import NAME_RE, chosen_namespace
from attestor_arango.validation import check_label, check_limit, check_metadata, check_offset

ITEM_TAG = "langgraph-item"
NAMESPACE_TAG = "langgraph-namespace"
_LABEL_CHARS = NAME_RE.pattern.replace("/", "")
_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}


def _category(key: str) -> str:
    """Entities match case-insensitively; the category makes a key's versions exact."""
    return "langgraph:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def _key(key: object) -> str:
    """``key`` if an item's entity can hold it (``validation.check_label``: at most
    ``MAX_LABEL`` characters once its whitespace is collapsed, no control character);
    raises ``ValidationError`` naming the key, not the entity the caller never saw."""
    if not isinstance(key, str):  # check_label lets None through: a key is never absent
        raise ValidationError("a LangGraph key must be a non-empty string")
    check_label(key, "a LangGraph key")
    return key


def _content(value: Mapping[str, Any]) -> str:
    """The text recall ranks: the value's string leaves, else its JSON."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, Mapping):
            for v in node.values():
                walk(v)
        elif isinstance(node, list | tuple):
            for v in node:
                walk(v)

    walk(value)
    text = " ".join(p.strip() for p in parts if p.strip())
    return text or json.dumps(value, sort_keys=True, default=str)


def _compare(have: Any, op: str, x: Any) -> bool:
    if op == "$eq":
        return bool(have == x)
    if op == "$ne":
        return bool(have != x)
    if have is None:
        return False
    try:
        if op == "$gt":
            return bool(have > x)
        if op == "$gte":
            return bool(have >= x)
        if op == "$lt":
            return bool(have < x)
        return bool(have <= x)
    except TypeError:  # values of different kinds never compare
        return False


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """LangGraph's value filter: equality, or ``{"$gt": x}``-style comparisons."""
    for field, cond in (wanted or {}).items():
        have = value.get(field)
        if isinstance(cond, Mapping) and cond and set(cond) <= _OPS:
            if not all(_compare(have, op, x) for op, x in cond.items()):
                return False
        elif have != cond:
            return False
    return True


class AttestorStore(BaseStore):
    """A LangGraph store whose items are AgentMemory memories of one tenant."""

    def __init__(
        self,
        memory: Any,
        context: AgentContext | None = None,
        *,
        root: str | None = None,
        as_of: str | datetime | None = None,
    ) -> None:
        self.memory = memory
        self.context: AgentContext = context or memory.default_context
        self.root = chosen_namespace(root, self.context.namespace)  # '' refused, not default
        self.as_of = as_of
        self._contexts: dict[str, AgentContext] = {}
        self._lock = threading.Lock()

    # -- mapping -----------------------------------------------------------------

    def _namespace(self, namespace: tuple[str, ...]) -> str:
        if not isinstance(namespace, tuple) or not namespace:
            raise InvalidNamespaceError("a namespace is a non-empty tuple of labels")
        for label in namespace:
            if not isinstance(label, str) or not label or "/" in label:
                raise InvalidNamespaceError(f"namespace label {label!r}: use {_LABEL_CHARS}")
        joined = "/".join((self.root, *namespace))
        if not NAME_RE.match(joined):
            raise InvalidNamespaceError(
                f"namespace {namespace!r} becomes {joined!r}, which is not a valid "
                f"AgentMemory namespace (letters, digits, ._:@-, 128 characters in all)"
            )
        return joined

    def _tuple(self, joined: str) -> tuple[str, ...]:
        return tuple(joined.split("/")[len(self.root.split("/")) :])

    def _ctx(self, joined: str) -> AgentContext:
        """One context per namespace, kept, so write limits count across calls."""
        with self._lock:
            ctx = self._contexts.get(joined)
            if ctx is None:
                ctx = self._contexts[joined] = replace(self.context, namespace=joined)
            return ctx

    def _current(self, joined: str, key: str) -> Any | None:
        rows = self.memory.list(
            entity=key,
            category=_category(key),
            as_of=self.as_of,
            limit=1,
            context=self._ctx(joined),
        )
        return rows[0] if rows else None

    def _fields(self, row: Any) -> dict[str, Any]:
        data = row.metadata.get("langgraph", {})
        created = data.get("created_at")
        return {
            "value": data.get("value", {}),
            "key": data.get("key", row.entity),
            "namespace": self._tuple(row.namespace),
            "created_at": datetime.fromisoformat(created) if created else row.t_created,
            "updated_at": row.t_created,
        }

    # -- operations ----------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        row = self._current(self._namespace(op.namespace), _key(op.key))
        return None if row is None else Item(**self._fields(row))

    def _put(self, op: PutOp) -> None:
        if self.as_of is not None:
            raise ValidationError("this store reads a past moment (as_of); it cannot write")
        joined = self._namespace(op.namespace)
        _key(op.key)
        if op.value is not None and not isinstance(op.value, Mapping):
            raise ValidationError("a LangGraph value must be a mapping (a dict), or None to delete")
        current = self._current(joined, op.key)
        ctx = self._ctx(joined)
        if op.value is None:
            if current is not None:
                self.memory.forget(current.id, reason="langgraph delete", context=ctx)
            return
        created = (
            current.metadata.get("langgraph", {}).get("created_at") or current.t_created.isoformat()
            if current is not None
            else None
        )
        value = dict(op.value)
        # the value rides in metadata: its depth and size are checked before _content
        # walks it (5,000 levels would raise RecursionError, not ValidationError)
        metadata = check_metadata(
            {"langgraph": {"key": op.key, "value": value, "created_at": created}}
        )
        self.memory.add(
            _content(value),
            entity=op.key,
            category=_category(op.key),
            tags=(ITEM_TAG,),
            metadata=metadata,
            context=ctx,
        )
        if current is None:
            self._remember_namespace(joined)

    def _remember_namespace(self, joined: str) -> None:
        """The index list_namespaces reads: one memory per namespace, in the root."""
        root = self._ctx(self.root)
        known = self.memory.list(entity=joined, category="langgraph-namespace", context=root)
        if not known:
            self.memory.add(
                f"LangGraph namespace {joined}",
                entity=joined,
                category="langgraph-namespace",
                tags=(NAMESPACE_TAG,),
                context=root,
            )

    def _namespaces(self) -> list[str]:
        rows = self.memory.list(
            tags=[NAMESPACE_TAG], as_of=self.as_of, limit=10_000, context=self._ctx(self.root)
        )
        out = []
        for row in rows:
            items = self.memory.list(
                tags=[ITEM_TAG], as_of=self.as_of, limit=1, context=self._ctx(str(row.entity))
            )
            if items:
                out.append(str(row.entity))
        return sorted(out)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        given = op.namespace_prefix
        if not isinstance(given, tuple | list) or not all(isinstance(x, str) for x in given):
            raise ValidationError("namespace_prefix must be a tuple of namespace labels")
        if op.query is not None and not isinstance(op.query, str):
            raise ValidationError("query must be a string or None")
        if op.filter is not None and not isinstance(op.filter, Mapping):
            raise ValidationError("filter must be a mapping of value fields or None")
        start, limit = check_offset(op.offset), check_limit(op.limit)
        prefix = tuple(given)
        scopes = [ns for ns in self._namespaces() if self._tuple(ns)[: len(prefix)] == prefix]
        found: list[tuple[float, str, str, Any]] = []
        for joined in scopes:
            ctx = self._ctx(joined)
            if op.query:  # ranked within the context's token budget
                response = self.memory.recall(op.query, as_of=self.as_of, context=ctx)
                hits = [(r.score, r.memory) for r in response.results]
            else:
                rows = self.memory.list(
                    tags=[ITEM_TAG],
                    as_of=self.as_of,
                    limit=10_000,  # every row: the merge below orders them newest first
                    context=ctx,
                )
                hits = [(0.0, m) for m in rows]
            for score, row in hits:
                if ITEM_TAG not in row.tags:
                    continue
                value = row.metadata.get("langgraph", {}).get("value", {})
                if _matches(value, op.filter):
                    found.append((score, joined, str(row.entity), row))
        if op.query:
            found.sort(key=lambda hit: (-hit[0], hit[1], hit[2]))
        else:  # most recently updated first (BaseStore leaves this order to the store)
            found.sort(key=lambda hit: (hit[3].t_created, hit[1], hit[2]), reverse=True)
        page = found[start : start + limit]
        return [
            SearchItem(**self._fields(row), score=score if op.query else None)
            for score, _, _, row in page
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        start, limit = check_offset(op.offset), check_limit(op.limit)
        depth = None if op.max_depth is None else check_limit(op.max_depth, name="max_depth")
        names = [self._tuple(ns) for ns in self._namespaces()]
        for cond in op.match_conditions or ():
            path = tuple(cond.path)

            def fits(
                ns: tuple[str, ...], path: tuple[str, ...] = path, kind: str = cond.match_type
            ) -> bool:
                if len(ns) < len(path):
                    return False
                part = ns[: len(path)] if kind == "prefix" else ns[len(ns) - len(path) :]
                return all(p in ("*", n) for p, n in zip(path, part, strict=True))

            names = [ns for ns in names if fits(ns)]
        if depth is not None:
            names = sorted({ns[:depth] for ns in names})
        return names[start : start + limit]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order; a typed AgentMemory error stops the batch."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValidationError(f"unknown LangGraph store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (AgentMemory calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))
