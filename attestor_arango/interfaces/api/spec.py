"""The REST route table: one row per AgentMemory operation.

Both the server (which mounts a route per row) and ``MemoryClient`` (which
turns a method call into a request) read this table, so the two can never
disagree about a path or where an argument travels. Nothing here imports
Starlette: the client stays usable without the server extra.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

API_PREFIX = "/v1"

# Headers a caller may use to pick, inside what its key allows, who it acts as.
H_AGENT = "x-agent-id"
H_ROLE = "x-agent-role"
H_TENANT = "x-tenant"
H_NAMESPACE = "x-namespace"
H_SESSION = "x-session-id"
H_READ_ONLY = "x-read-only"
H_TRAIL = "x-agent-trail"
H_BUDGET = "x-token-budget"
H_API_KEY = "x-api-key"


@dataclass(frozen=True, slots=True)
class Route:
    """How one AgentMemory method is reached over HTTP.

    ``path_params`` name arguments taken from the path; with ``query`` the other
    arguments travel in the query string (GET), otherwise in a JSON body.
    ``tenant_arg`` names an argument that must equal the caller's tenant: a key
    can never name another tenant, whatever the method would accept.
    """

    op: str
    method: str
    path: str
    summary: str
    tag: str
    path_params: tuple[str, ...] = ()
    query: bool = False
    tenant_arg: str | None = None

    @property
    def full_path(self) -> str:
        return API_PREFIX + self.path

    @property
    def tenant_args(self) -> tuple[str, ...]:
        """``tenant_arg`` and Attestor's names for it (``external_id``, ``user_id``)."""
        return (self.tenant_arg, *TENANT_ALIASES) if self.tenant_arg else ()


# Attestor's keyword names for the tenant a governance call is about (AgentMemory accepts them)
TENANT_ALIASES = ("external_id", "user_id")


ROUTES: tuple[Route, ...] = (
    Route("add", "POST", "/memories", "Store a fact (rule-based supersession)", "memories"),
    Route(
        "get",
        "GET",
        "/memories/{memory_id}",
        "Read one memory",
        "memories",
        path_params=("memory_id",),
        query=True,
    ),
    Route(
        "update",
        "PATCH",
        "/memories/{memory_id}",
        "Write a new version of a memory",
        "memories",
        path_params=("memory_id",),
    ),
    Route(
        "forget",
        "POST",
        "/memories/{memory_id}/forget",
        "Close a memory (orchestrator)",
        "memories",
        path_params=("memory_id",),
    ),
    Route(
        "verify_memory",
        "GET",
        "/memories/{memory_id}/verify",
        "Check a memory's signature",
        "governance",
        path_params=("memory_id",),
        query=True,
    ),
    Route("list", "POST", "/memories/list", "List memories by filters", "memories"),
    Route("count", "POST", "/memories/count", "Count what list pages through", "memories"),
    Route(
        "list_page",
        "POST",
        "/memories/page",
        "List a page at a time: the total and a cursor that pins the view",
        "memories",
    ),
    Route(
        "get_episode",
        "GET",
        "/episodes/{episode_id}",
        "Read one conversation round verbatim",
        "memories",
        path_params=("episode_id",),
        query=True,
    ),
    Route("search", "POST", "/search", "Ranked search returning memories", "retrieval"),
    Route("recall", "POST", "/recall", "Ranked, budget-packed recall", "retrieval"),
    Route("recall_as_pack", "POST", "/recall/pack", "Recall as a frozen pack", "retrieval"),
    Route(
        "explain_recall",
        "POST",
        "/recall/explain",
        "Recall plus what its token budget cut, from one ranking",
        "retrieval",
    ),
    Route(
        "recall_trace",
        "GET",
        "/recall/traces/{recall_id}",
        "A recorded recall by its id (inputs, result ids, steps) for replay",
        "retrieval",
        path_params=("recall_id",),
        query=True,
    ),
    Route("timeline", "POST", "/timeline", "Every version about an entity", "temporal"),
    Route("current_facts", "POST", "/facts/current", "Active facts", "temporal"),
    Route("stats", "GET", "/stats", "Counts for the caller's tenant", "service", query=True),
    Route("health", "GET", "/health", "Store and embedder health", "service", query=True),
    Route("ingest_round", "POST", "/ingest", "Ingest one conversation round", "ingest"),
    Route("add_turns", "POST", "/turns", "Store conversation turns as they happen", "ingest"),
    Route("consolidate", "POST", "/consolidate", "Re-read recent episodes", "ingest"),
    Route("reflect", "POST", "/reflect", "Flag contradictions for review", "ingest"),
    Route(
        "export_user",
        "POST",
        "/governance/export",
        "Export a tenant (subject access)",
        "governance",
        tenant_arg="user",
    ),
    Route(
        "import_user",
        "POST",
        "/governance/import",
        "Import an export into the caller's (empty) tenant",
        "governance",
    ),
    Route(
        "purge_user",
        "POST",
        "/governance/purge",
        "Erase a tenant (GDPR)",
        "governance",
        tenant_arg="user",
    ),
    Route(
        "set_quota",
        "POST",
        "/governance/quota",
        "Set a daily write quota",
        "governance",
        tenant_arg="user",
    ),
    Route(
        "quota_status",
        "GET",
        "/governance/quota",
        "Read the daily write quota",
        "governance",
        query=True,
        tenant_arg="user",
    ),
    Route(
        "compact",
        "POST",
        "/governance/compact",
        "Remove rows archived long ago",
        "governance",
    ),
    Route(
        "apply_retention",
        "POST",
        "/governance/retention",
        "Apply retention rules",
        "governance",
    ),
    Route("audit_log", "GET", "/audit", "Read the tenant's audit chain", "governance", query=True),
    Route(
        "audit_page",
        "GET",
        "/audit/page",
        "A page of the audit chain, newest first, each entry's links checked",
        "governance",
        query=True,
    ),
    Route(
        "verify_audit_chain",
        "POST",
        "/audit/verify",
        "Verify the audit hash chain",
        "governance",
        tenant_arg="user",
    ),
    Route(
        "deletion_audit_log",
        "GET",
        "/audit/deletions",
        "Read deletion audit entries",
        "governance",
        query=True,
    ),
    Route(
        "verify_all", "GET", "/verify", "Check every memory's signature", "governance", query=True
    ),
)

ROUTES_BY_OP: dict[str, Route] = {route.op: route for route in ROUTES}

# Operations over every namespace of a tenant: refused to namespace-limited keys.
TENANT_WIDE: frozenset[str] = frozenset(
    {
        "set_quota",
        "quota_status",
        "export_user",
        "import_user",
        "purge_user",
        "apply_retention",
        "compact",
        "audit_log",
        "audit_page",
        "verify_audit_chain",
        "deletion_audit_log",
        "verify_memory",
        "verify_all",
    }
)

# Public AgentMemory methods that are local-only by nature (no remote meaning).
# ``reembed`` runs beside the store (a long job with a progress bar), not over HTTP.
LOCAL_ONLY: frozenset[str] = frozenset({"close", "reembed"})


def public_methods(cls: type) -> list[str]:
    """Names of the public callable methods a class defines (its own and inherited)."""
    names = []
    for name, value in inspect.getmembers(cls):
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        names.append(name)
    return sorted(names)
