"""The audit log: an append-only, per-tenant hash chain.

Each entry hashes its own fields together with the previous entry's hash, so
editing, removing or reordering any entry breaks every hash after it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from attestor_arango.clock import from_us, to_us
from attestor_arango.models import AuditEntry
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Store

if TYPE_CHECKING:
    from attestor_arango.context import AgentContext
    from attestor_arango.core.runtime import Runtime

GENESIS = "0" * 64


def entry_hash(fields: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of an entry's fields (without its own hash)."""
    payload = {k: v for k, v in fields.items() if k != "hash"}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def hash_fields(entry: AuditEntry) -> dict[str, Any]:
    return {
        "tenant": entry.tenant,
        "seq": entry.seq,
        "id": entry.id,
        "ts": to_us(entry.ts),
        "agent_id": entry.agent_id,
        "role": entry.role,
        "action": entry.action,
        "target": entry.target,
        "details": entry.details,
        "prev_hash": entry.prev_hash,
    }


def append(
    store: Store,
    scope: Scope,
    *,
    entry_id: str,
    ts_us: int,
    agent_id: str,
    role: str,
    action: str,
    target: str | None,
    details: dict[str, Any],
) -> AuditEntry:
    """Appends one entry; call inside ``store.transaction()`` so the chain cannot fork."""
    with store.transaction():
        last = store.last_audit(scope)
        fields: dict[str, Any] = {
            "tenant": scope.tenant,
            "seq": 1 if last is None else last.seq + 1,
            "id": entry_id,
            "ts": ts_us,
            "agent_id": agent_id,
            "role": role,
            "action": action,
            "target": target,
            "details": json.loads(json.dumps(details, sort_keys=True, default=str)),
            "prev_hash": GENESIS if last is None else last.hash,
        }
        entry = AuditEntry(**{**fields, "ts": from_us(ts_us)}, hash=entry_hash(fields))
        store.append_audit(scope, entry)
        return entry


class Auditor:
    """Writes the entries of one memory's services into the caller's tenant chain.

    Built once from the ``Runtime``; services get it instead of reaching into
    ``AgentMemory``. The entry's time and id come from the runtime's clock and id source.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def record(
        self,
        ctx: AgentContext,
        action: str,
        target: str | None,
        details: dict[str, Any] | None = None,
    ) -> AuditEntry:
        """Appends ``action`` on ``target`` by the context's agent; raises ``StoreError``."""
        rt = self.runtime
        now = rt.clock.now_us()
        return append(
            rt.store,
            Scope(ctx.tenant),
            entry_id=rt.ids.new_id(now),
            ts_us=now,
            agent_id=ctx.agent_id,
            role=ctx.role.value,
            action=action,
            target=target,
            details={"namespace": ctx.namespace, **(details or {})},
        )
