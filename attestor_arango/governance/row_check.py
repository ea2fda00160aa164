"""Verification of the rows against the chain: every memory row is what its entries say.

The chain records each write with a digest of everything the row asserts
(``core.audit.row_digest``: content, entity, category, tags, confidence, validity,
namespace, tenant, provenance), each close (supersede, update, forget, retention
archive) and each removal (purge, retention delete, compaction); an import records
the digest of every row it restored. Replaying those entries gives the state the
tenant must be in, which is compared with the rows the store holds:

- ``row_modified``: a row's digest differs (an edited validity, entity, category,
  confidence, content or namespace) or its status differs from what was recorded;
- ``row_unforgotten``: the chain closed the row, the store holds it open;
- ``row_closed_unrecorded``: the store holds it closed, the chain never closed it;
- ``row_missing``: the chain wrote it and never removed it, the store lacks it
  (a deleted row, or one moved to another tenant);
- ``row_unrecorded``: the store holds a row no entry of this tenant wrote (a row
  inserted around the write path, or moved in from another tenant).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attestor_arango.clock import OPEN
from attestor_arango.core.audit import row_digest
from attestor_arango.core.paging import all_memories
from attestor_arango.models import AuditEntry, Memory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter, MemoryStore

CLOSES = {"supersede": "superseded", "update": "superseded", "forget": "archived"}
REMOVES = ("retention_delete_attempted", "compact_attempted")


@dataclass
class Expected:
    digest: str
    status: str | None = None  # None: open; else the status the chain closed it with
    removable: bool = False  # a removal of it was attempted (its absence is recorded)


@dataclass
class RowLedger:
    """The state of a tenant's rows as its audit entries tell it, built during the walk."""

    rows: dict[str, Expected] = field(default_factory=dict)

    def see(self, entry: AuditEntry) -> None:
        d: dict[str, Any] = entry.details
        action, target = entry.action, entry.target
        if action == "add" and target and isinstance(d.get("row"), str):
            self.rows[target] = Expected(d["row"])
        elif action in CLOSES and target in self.rows:
            self.rows[target].status = CLOSES[action]
        elif action == "retention_archive":
            for rid in d.get("ids") or ():
                if rid in self.rows:
                    self.rows[rid].status = "archived"
        elif action in REMOVES:
            for rid in d.get("ids") or ():
                if rid in self.rows:
                    self.rows[rid].removable = True
        elif action == "purge_attempted":
            for row in self.rows.values():
                row.removable = True
        elif action == "purge_completed":
            self.rows.clear()
        elif action == "import":
            for item in d.get("rows") or ():
                if isinstance(item, list) and len(item) == 3:
                    rid, digest, status = item
                    self.rows[str(rid)] = Expected(str(digest), status)


def _all_rows(store: MemoryStore, tenant: str) -> list[Memory]:
    view = TemporalView(as_of=OPEN - 1, include_closed=True)
    return list(all_memories(store, Scope(tenant), MemoryFilter(), view))


def check_rows(store: MemoryStore, tenant: str, ledger: RowLedger) -> list[tuple[str, str]]:
    """(kind, message) for every row that disagrees with the chain."""
    problems: list[tuple[str, str]] = []
    held = {m.id: m for m in _all_rows(store, tenant)}
    for rid, m in held.items():
        want = ledger.rows.get(rid)
        if want is None:
            why = "was written by no entry of this chain: inserted or moved here"
            problems.append(("row_unrecorded", f"memory {rid} {why}"))
            continue
        if row_digest(m) != want.digest:
            problems.append(("row_modified", f"memory {rid} no longer matches the digest "
                             "its write recorded: what it asserts was edited"))  # fmt: skip
        closed = m.t_expired is not None
        if want.status is not None and not closed:
            problems.append(("row_unforgotten", f"memory {rid} was closed "
                             f"({want.status}) in the chain but is open in the store"))  # fmt: skip
        elif want.status is None and closed:
            problems.append(("row_closed_unrecorded", f"memory {rid} is closed in the "
                             "store but the chain never closed it"))  # fmt: skip
        elif want.status is not None and m.status.value != want.status:
            problems.append(("row_modified", f"memory {rid} has status {m.status.value}, "
                             f"the chain recorded {want.status}"))  # fmt: skip
    for rid, want in ledger.rows.items():
        if rid not in held and not want.removable:
            problems.append(("row_missing", f"memory {rid} was written and never removed "
                             "in the chain, but the store no longer holds it"))  # fmt: skip
    return problems


def import_rows(memories: list[Memory]) -> list[list[Any]]:
    """What an ``import`` entry records per restored row: id, digest, closing status."""
    return [
        [m.id, row_digest(m), None if m.t_expired is None else m.status.value] for m in memories
    ]
