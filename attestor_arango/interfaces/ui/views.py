"""What each Evidence Board page shows, read through AgentMemory's public methods only.

Each function takes a ``Reader`` (the caller's key and read-only context) and the
page's query parameters and returns the template's variables. Nothing here ranks,
filters or verifies by itself: the numbers on a page are the ones the API returns,
so the board can never disagree with a REST caller holding the same key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attestor_arango.clock import parse_time, to_us
from attestor_arango.errors import AttestorError, ValidationError
from attestor_arango.interfaces.ui import params as P
from attestor_arango.interfaces.ui.access import Reader
from attestor_arango.interfaces.ui.timeline import timeline_chart
from attestor_arango.interfaces.ui.verify import Verifications
from attestor_arango.models import AuditEntry, Memory, content_hash
from attestor_arango.reports import AuditPage

SEARCH_MAX = 1000  # AgentMemory.search's own limit


def _filters(q: Mapping[str, str]) -> dict[str, Any]:
    tag = P.text(q, "tag")
    return {
        "entity": P.text(q, "entity"),
        "category": P.text(q, "category"),
        "tags": [tag] if tag else None,
        "status": P.status(q),
    }


def earliest_us(r: Reader) -> int | None:
    """The first transaction time in the namespace: the left end of the as-of slider."""
    first = r.call("list", namespace=r.context.namespace, status="all", limit=1)
    return to_us(first[0].t_created) if first else None


def memories(r: Reader, q: Mapping[str, str]) -> dict[str, Any]:
    """One page of memories (list, or BM25 search when ``q`` is given) plus the totals."""
    paging = P.Paging.of(q)
    filters = _filters(q)
    as_of = P.as_of(q)
    query = P.text(q, "q")
    total: int | None
    exact = True
    if query:
        want = paging.page * paging.per + 1
        if want > SEARCH_MAX:
            raise ValidationError(
                f"search shows at most its first {SEARCH_MAX} matches; narrow the query "
                "or the filters instead of paging further"
            )
        found = r.call("search", query=query, limit=want, as_of=as_of, **filters)
        rows = found[paging.offset : paging.offset + paging.per]
        has_next = len(found) > paging.offset + paging.per
        total, exact = (len(found), True) if len(found) < want else (len(found) - 1, False)
    else:
        found = r.call(
            "list",
            namespace=r.context.namespace,
            as_of=as_of,
            limit=paging.per + 1,
            offset=paging.offset,
            **filters,
        )
        rows = found[: paging.per]
        has_next = len(found) > paging.per
        total = int(r.call("count", namespace=r.context.namespace, as_of=as_of, **filters))
    return {
        "rows": rows,
        "paging": paging,
        "has_next": has_next,
        "total": total,
        "total_exact": exact,
        "search_query": query,
        "filters": filters,
    }


def timeline(r: Reader, q: Mapping[str, str]) -> dict[str, Any]:
    """Every version of an entity's facts, with the supersession links and evidence."""
    entity = P.text(q, "entity")
    if entity is None:
        return {"entity": None, "versions": [], "chart": None}
    as_of = P.as_of(q)
    versions: list[Memory] = r.call("timeline", entity=entity, as_of=as_of)
    end_us = parse_time(as_of, field="as_of") if as_of is not None else None
    by_id = {v.id: v for v in versions}
    return {
        "entity": entity,
        "versions": versions,
        "by_id": by_id,
        "chart": timeline_chart(versions, end_us) if versions else None,
    }


def provenance(r: Reader, memory_id: str, q: Mapping[str, str]) -> dict[str, Any]:
    """One memory: who wrote it through which agents, its evidence and its signature."""
    as_of = P.as_of(q)
    memory: Memory = r.call("get", memory_id=memory_id, as_of=as_of)
    signature: dict[str, Any] = {"signed": bool(memory.signature)}
    try:
        # the id ``get`` resolved: the page's may be a short id, which only ``get`` takes
        signature["valid"] = bool(r.call("verify_memory", memory_id=memory.id))
    except AttestorError as exc:
        signature["error"] = exc.message
    episode, episode_error = None, None
    source = memory.provenance.source_episode_id
    if source:
        try:
            episode = r.call("get_episode", episode_id=source)
        except AttestorError as exc:
            episode_error = exc.message
    return {
        "m": memory,
        "hash_ok": content_hash(memory.content) == memory.content_hash,
        "signature": signature,
        "episode": episode,
        "episode_error": episode_error,
    }


def audit(r: Reader, q: Mapping[str, str], runs: Verifications) -> dict[str, Any]:
    """A page of the tenant's hash chain, newest first, each shown entry's links checked;
    the latest full verification of this head if one was run; the deletion trail."""
    if not r.tenant_wide:
        raise _namespace_limited("the audit chain")
    per = P.number(q, "per", 100, 1, P.MAX_PER_PAGE)
    raw_before = P.text(q, "before")
    before = None if raw_before is None else P.number(q, "before", 1, 1, 2**62)
    page: AuditPage = r.call("audit_page", before_seq=before, limit=per)
    problems: dict[int | None, list[Any]] = {}
    for problem in page.problems:
        problems.setdefault(problem.seq, []).append(problem)
    run = runs.latest(r.context.tenant)
    full = run if run is not None and run.done and run.report is not None else None
    first_break = None
    if full is not None:
        first_break = min((p.seq for p in full.report.problems if p.seq is not None), default=None)
    deletions: list[AuditEntry] = r.call("deletion_audit_log", limit=50)
    newest = page.before_seq is None or page.before_seq > page.last_seq
    return {
        "chain": page,
        "entries": page.entries,
        "problems": problems,
        "per": per,
        "newest": newest,
        "newer_before": _page_with(page.entries[0].seq + per, page.last_seq)
        if page.entries
        else None,
        "run": run,
        "full": full,
        "current": full is not None and full.head == page.head,
        "first_break": first_break,
        "break_before": None
        if first_break is None
        else _page_with(first_break, page.last_seq, per),
        "purges": [e for e in deletions if e.action.startswith("purge_")],
        "deletions": [e for e in deletions if not e.action.startswith("purge_")],
        "short": _short,
    }


def _page_with(seq: int, last_seq: int, per: int = 0) -> int | None:
    """The ``before`` cursor of a page showing ``seq`` near its middle (None: the newest)."""
    before = seq + per // 2 + 1
    return None if before > last_seq else before


def _short(value: Any, limit: int = 120) -> str:
    """An audit detail as JSON, cut to ``limit`` characters (an import lists every row)."""
    import json

    if isinstance(value, list) and len(value) > 8:
        return f"[{len(value)} items]"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verify(r: Reader, q: Mapping[str, str], runs: Verifications) -> dict[str, Any]:
    """Starts (or shows) the full verification of the chain and every row."""
    if not r.tenant_wide:
        raise _namespace_limited("the audit chain")
    head = r.call("audit_page", limit=1).head
    run = runs.start(r, head, again=P.text(q, "again") == "1")
    done = run.done  # once: the run may finish while this page renders
    first_break = None
    if done and run.report is not None:
        first_break = min((p.seq for p in run.report.problems if p.seq is not None), default=None)
    last_seq = head[0] if head else 0
    return {
        "run": run,
        "done": done,
        "head": head,
        "current": run.head == head,
        "first_break": first_break,
        "break_before": None if first_break is None else _page_with(first_break, last_seq, 100),
    }


def _namespace_limited(what: str) -> AttestorError:
    from attestor_arango.errors import AccessDenied

    return AccessDenied(
        f"{what} covers the whole tenant, and this key is limited to some namespaces; "
        "open the board with a key without a namespace limit"
    )
