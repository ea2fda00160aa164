"""AgentMemory's governance methods: quotas, export and import, erasure, audit, signatures.

Thin delegations to attestor_arango/governance/, kept apart so memory.py stays the
memory API; permissions per operation are listed in governance/access.py (tenant-wide
operations need FORGET, audit reads need READ). mypy sees ``self`` in a mixin as the
mixin; each method ``cast``s it to the ``AgentMemory`` it is mixed into, whose helpers
it calls and which the functions it delegates to take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from attestor_arango.context import AgentContext
from attestor_arango.core import audit as audit_log
from attestor_arango.errors import ValidationError
from attestor_arango.governance import audit_chain as gov_audit
from attestor_arango.governance import compact as gov_compact
from attestor_arango.governance import export as gov_export
from attestor_arango.governance import provenance as gov_provenance
from attestor_arango.governance import purge as gov_purge
from attestor_arango.governance import quotas as gov_quotas
from attestor_arango.governance import retention as gov_retention
from attestor_arango.governance.access import guard
from attestor_arango.validation import check_limit

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory


class GovernanceMixin:
    """Tenant-wide operations of ``AgentMemory``; every one checks its permission first."""

    def set_quota(
        self, user: str, *, daily_writes: int | None, context: AgentContext | None = None
    ) -> dict[str, Any]:
        """Sets the tenant's writes per UTC day (None removes the limit); audited."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "set_quota", user)
        limit = gov_quotas.check_limit(daily_writes)
        return gov_quotas.set_quota(mem, ctx, user, limit)

    def quota_status(
        self, user: str | None = None, *, context: AgentContext | None = None
    ) -> dict[str, Any]:
        """Limit, writes used today (UTC) and when the counter resets."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        user = ctx.tenant if user is None else user
        guard(mem, ctx, "quota_status", user)
        return gov_quotas.quota_status(mem, user)

    def export_user(self, user: str, *, context: AgentContext | None = None) -> dict[str, Any]:
        """Everything held about tenant ``user`` (subject-access request), JSON-ready."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "export_user", user)
        return gov_export.export_user(mem, ctx, user)

    def import_user(
        self, data: dict[str, Any], *, context: AgentContext | None = None
    ) -> dict[str, int]:
        """Restores an ``export_user`` result into the context's tenant, which must be empty."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "import_user")
        return gov_export.import_user(mem, ctx, data)

    def purge_user(
        self, user: str, reason: str, *, context: AgentContext | None = None
    ) -> gov_purge.PurgeReport:
        """GDPR erasure of tenant ``user``; check ``report.ok`` (a partial purge is a failure)."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "purge_user", user)
        why = gov_purge.check_reason(reason)
        return gov_purge.purge_user(mem, ctx, user, why)

    def verify_audit_chain(
        self,
        user: str | None = None,
        *,
        anchor: tuple[int, str] | None = None,
        context: AgentContext | None = None,
    ) -> gov_audit.ChainReport:
        """Walks the tenant's audit chain; ``anchor`` is a (seq, hash) saved outside the store."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        user = ctx.tenant if user is None else user
        guard(mem, ctx, "verify_audit_chain", user)
        return gov_audit.verify_chain(
            mem.store,
            user,
            lambda e: audit_log.entry_hash(audit_log.hash_fields(e)),
            audit_log.GENESIS,
            anchor=gov_audit.check_anchor(anchor),
        )

    def deletion_audit_log(
        self, limit: int = 100, *, context: AgentContext | None = None
    ) -> gov_audit.AuditEntries:
        """Audit entries about forgotten, purged, retained-away or compacted data, newest first."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "deletion_audit_log")
        return gov_audit.deletion_log(mem.store, ctx.tenant, check_limit(limit))

    def apply_retention(
        self,
        policies: Any = None,
        *,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> gov_retention.RetentionReport:
        """Runs retention policies (default: ``config.retention``); dry_run only lists."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "apply_retention")
        parsed = gov_retention.load_policies(mem.config.retention if policies is None else policies)
        return gov_retention.apply_retention(mem, ctx, parsed, bool(dry_run))

    def compact(
        self,
        *,
        older_than: str | int | float,
        dry_run: bool = False,
        context: AgentContext | None = None,
    ) -> dict[str, Any]:
        """Physically removes rows archived more than ``older_than`` ago ('30d', '12h', days)."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "compact")
        return gov_compact.compact(mem, ctx, older_than, bool(dry_run))

    def verify_memory(self, memory_id: str, *, context: AgentContext | None = None) -> bool:
        """True when the memory's Ed25519 signature matches its current content."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "verify_memory")
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("memory_id must be a non-empty string")
        return gov_provenance.verify_memory(mem, ctx, memory_id)

    def verify_all(self, *, context: AgentContext | None = None) -> dict[str, Any]:
        """Checks every stored version's signature; names the ids that fail or are unsigned."""
        mem = cast("AgentMemory", self)
        ctx = mem._ctx(context)
        guard(mem, ctx, "verify_all")
        return gov_provenance.verify_all(mem, ctx)
