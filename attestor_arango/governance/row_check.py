"""Verification of the rows against the chain: every memory row is what its entries say.

The chain records each write with a digest of everything the row asserts
(``core.audit.row_digest``: content, entity, category, tags, confidence, validity,
namespace, tenant, provenance), each close (supersede, update, forget, retention
archive) and each removal (purge, retention delete, compaction); an import records
the digest of every row it restored. Replaying those entries gives the state the
tenant must be in (a completed purge forgets the rows held when it began; a row written
while a purge ran, completed or failed, may have been erased or may remain), which is
compared with the rows the store holds:

- ``row_modified``: a row's digest differs (an edited validity, entity, category,
  confidence, content or namespace; with entries that record ``extra`` also its metadata
  and agent trail, ``extra_digest``), its ``content_hash`` is not its content's, or its
  status, closing time or successor differs
  from what was recorded (the close entries carry ``at`` and, for a supersession,
  ``by``);
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
from attestor_arango.core.audit import extra_digest, row_digest
from attestor_arango.core.paging import all_memories
from attestor_arango.models import AuditEntry, Memory, content_hash
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter, MemoryStore

CLOSES = {"supersede": "superseded", "update": "superseded", "forget": "archived"}
REMOVES = ("retention_delete_attempted", "compact_attempted")


@dataclass
class Expected:
    digest: str
    status: str | None = None  # None: open; else the status the chain closed it with
    removable: bool = False  # a removal of it was attempted (its absence is recorded)
    extra: str | None = None  # extra_digest, when the entry recorded one
    closed_at: int | None = None  # t_expired the close recorded (None: not recorded)
    successor: str | None = None  # superseded_by the close recorded, with closed_at
    purging: bool = False  # held when a purge began: forgotten when it completes

    def close(self, status: str, at: object, successor: object = None) -> None:
        self.status = status
        self.closed_at = at if type(at) is int else None
        self.successor = successor if isinstance(successor, str) else None


@dataclass
class RowLedger:
    """The state of a tenant's rows as its audit entries tell it, built during the walk."""

    rows: dict[str, Expected] = field(default_factory=dict)

    def see(self, entry: AuditEntry) -> None:
        d: dict[str, Any] = entry.details
        action, target = entry.action, entry.target
        if action == "add" and target and isinstance(d.get("row"), str):
            extra = d.get("extra")
            self.rows[target] = Expected(d["row"], extra=extra if isinstance(extra, str) else None)
        elif action in CLOSES and target in self.rows:
            self.rows[target].close(CLOSES[action], d.get("at"), d.get("by"))
        elif action == "retention_archive":
            for rid in d.get("ids") or ():
                if rid in self.rows:
                    self.rows[rid].close("archived", d.get("at"))
        elif action in REMOVES:
            for rid in d.get("ids") or ():
                if rid in self.rows:
                    self.rows[rid].removable = True
        elif action == "purge_attempted":
            for row in self.rows.values():
                row.removable = row.purging = True
        elif action == "purge_completed":
            # the rows held when the purge began are gone; one written while it ran may
            # have been erased or may remain (it committed after the purge's count)
            self.rows = {rid: row for rid, row in self.rows.items() if not row.purging}
            for row in self.rows.values():
                row.removable = True
        elif action == "purge_failed":  # a row written while it ran may have been erased
            for row in self.rows.values():
                row.removable = True
        elif action == "import":
            for item in d.get("rows") or ():
                if isinstance(item, list) and len(item) in (3, 6):
                    rid, digest, status, *more = item
                    row = self.rows[str(rid)] = Expected(str(digest), status)
                    if more:  # newer entries: extra digest, closing time, successor
                        row.extra = more[0] if isinstance(more[0], str) else None
                        if status is not None:
                            row.close(status, more[1], more[2])


def _all_rows(store: MemoryStore, tenant: str) -> list[Memory]:
    view = TemporalView(as_of=OPEN - 1, include_closed=True)
    return list(all_memories(store, Scope(tenant), MemoryFilter(), view))


def check_rows(store: MemoryStore, tenant: str, ledger: RowLedger) -> list[tuple[str, str]]:
    """(kind, message) for every row that disagrees with the chain."""
    return compare_rows({m.id: m for m in _all_rows(store, tenant)}, ledger)


def compare_rows(held: dict[str, Memory], ledger: RowLedger) -> list[tuple[str, str]]:
    """(kind, message) for every row of ``held`` (by id) that disagrees with the chain."""
    problems: list[tuple[str, str]] = []
    for rid, m in held.items():
        want = ledger.rows.get(rid)
        if want is None:
            why = "was written by no entry of this chain: inserted or moved here"
            problems.append(("row_unrecorded", f"memory {rid} {why}"))
            continue
        if row_digest(m) != want.digest:
            problems.append(("row_modified", f"memory {rid} no longer matches the digest "
                             "its write recorded: what it asserts was edited"))  # fmt: skip
        elif want.extra is not None and extra_digest(m) != want.extra:
            problems.append(("row_modified", f"memory {rid}'s metadata or agent trail no "
                             "longer matches what its write recorded"))  # fmt: skip
        elif m.content_hash != content_hash(m.content):  # what dedup and signatures compare
            problems.append(("row_modified", f"memory {rid}'s content_hash is not the "
                             "hash of its content"))  # fmt: skip
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
        elif closed and want.closed_at is not None and m.us("t_expired") != want.closed_at:
            problems.append(("row_modified", f"memory {rid} was closed at another time than "
                             "the chain recorded: what past reads replay was edited"))  # fmt: skip
        elif closed and want.closed_at is not None and m.superseded_by != want.successor:
            problems.append(("row_modified", f"memory {rid} names another successor than "
                             f"the chain recorded ({want.successor})"))  # fmt: skip
    for rid, want in ledger.rows.items():
        if rid not in held and not want.removable:
            problems.append(("row_missing", f"memory {rid} was written and never removed "
                             "in the chain, but the store no longer holds it"))  # fmt: skip
    return problems


def import_rows(memories: list[Memory]) -> list[list[Any]]:
    """What an ``import`` entry records per restored row: id, digest, closing status,
    extra digest, closing time and successor."""
    return [
        [
            m.id,
            row_digest(m),
            None if m.t_expired is None else m.status.value,
            extra_digest(m),
            None if m.t_expired is None else m.us("t_expired"),
            m.superseded_by,
        ]
        for m in memories
    ]
