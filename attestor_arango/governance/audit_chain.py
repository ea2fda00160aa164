"""Verifying a tenant's audit hash chain, and reading the deletion trail back.

Each entry stores the hash of its predecessor and a hash over its own fields.
Walking the chain in ``seq`` order detects:

- an edited entry (its recomputed hash differs from the stored one);
- a removed entry (a gap in ``seq`` and a link that no longer matches);
- reordered entries (links and hashes no longer line up; time runs backwards);
- a truncated tail: the store records the newest ``(seq, hash)`` it ever
  appended apart from the entries (``Store.audit_head``), and an operator can
  pass an ``anchor`` saved earlier outside the store, which also catches an
  attacker who rewrote that head record;
- with the service's public key (``signatures``): an entry whose signature is not
  the key's (``bad_signature``), and an unsigned entry after a signed one or after
  the anchor (``unsigned``). A tail appended by someone who can write the file but
  does not hold the private key is caught even when every hash is consistent.
  Unsigned entries before the first signed one are accepted: they were written
  before signing was turned on (docs/design-notes.md states the limits).

Problems are collected, not raised: the report names every bad link so an
investigator sees the extent of the damage, not just the first break.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from attestor_arango.core.audit import row_text_digests
from attestor_arango.errors import ValidationError
from attestor_arango.governance.row_check import RowLedger, check_rows
from attestor_arango.models import AuditEntry
from attestor_arango.reports import AuditEntries, AuditPage, ChainProblem, ChainReport
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import AuditStore, Store
from attestor_arango.validation import INT64

PAGE = 500
_HEX64 = re.compile(r"[0-9a-f]{64}")

# actions that removed or hid data, for deletion_audit_log()
DELETION_ACTIONS = frozenset(
    {
        "forget",
        "purge_attempted",
        "purge_completed",
        "purge_failed",
        "retention_archive",
        "retention_delete_attempted",
        "retention_delete",
        "retention_delete_failed",
        "retention_run",
        "compact_attempted",
        "compact",
        "compact_failed",
    }
)

HashFn = Callable[[AuditEntry], str]
SignatureFn = Callable[[AuditEntry], bool]


def check_before_seq(before_seq: object) -> int | None:
    """``audit_page``'s cursor: an entry's seq (a positive integer), or None for the newest."""
    if before_seq is not None and (
        isinstance(before_seq, bool) or not isinstance(before_seq, int) or before_seq < 1
    ):
        raise ValidationError("before_seq must be a positive integer (an entry's seq), or None")
    return before_seq


def check_anchor(anchor: object) -> tuple[int, str] | None:
    """An anchor is ``(seq, hash)`` as printed by an earlier ``verify_audit_chain``."""
    if anchor is None:
        return None
    if (
        isinstance(anchor, list | tuple)
        and len(anchor) == 2
        and isinstance(anchor[0], int)
        and not isinstance(anchor[0], bool)
        and 1 <= anchor[0] <= INT64[1]  # a stored seq; a longer int cannot be printed
        and isinstance(anchor[1], str)
        and _HEX64.fullmatch(anchor[1])
    ):
        return (anchor[0], anchor[1])
    raise ValidationError(
        "anchor must be (seq, hash): the last_seq and last_hash of an earlier "
        "verify_audit_chain report, e.g. (42, '3f2a...') with a 64-hex-digit hash"
    )


def iter_chain(store: AuditStore, tenant: str, page: int = PAGE) -> Iterator[AuditEntry]:
    """Every entry of the tenant's chain in ``seq`` order, paged."""
    scope = Scope(tenant)
    after = 0
    while True:
        batch = store.read_audit(scope, page, after)
        yield from batch
        if len(batch) < page:
            return
        after = batch[-1].seq


@dataclass(frozen=True)
class ChainExposure:
    """What a tenant's audit chain holds that an erasure cannot reach: entries with unkeyed
    digests written before salts (schema 8; ``core.audit.row_text_digests``), which confirm an
    exact guess of an erased text, and ``export`` entries, copies taken outside the store;
    and what the chain keeps by design, verbatim: how many entries, and how many distinct
    namespaces and agent ids (the scope of each entry, its legal record) and tenants an
    import came from (an ``import`` entry's source) they name."""

    legacy_digest_entries: int
    exports: int
    entries: int = 0
    namespaces: int = 0
    agent_ids: int = 0
    source_tenants: int = 0


def chain_exposure(store: AuditStore, tenant: str) -> ChainExposure:
    """One walk of the tenant's chain, counting what ``ChainExposure`` names; the purge
    reports it and ``doctor`` warns of the first. Raises what the store's reads raise."""
    held = exports = entries = 0
    namespaces: set[str] = set()
    agents: set[str] = set()
    sources: set[str] = set()
    for entry in iter_chain(store, tenant):
        entries += 1
        held += 1 if row_text_digests(entry.action, entry.details) else 0
        exports += entry.action == "export"
        namespace, parent = entry.details.get("namespace"), entry.details.get("parent_agent_id")
        namespaces.update([namespace] if isinstance(namespace, str) else [])
        agents.update([entry.agent_id, *([parent] if isinstance(parent, str) else [])])
        source = entry.details.get("source") if entry.action == "import" else None
        if isinstance(source, dict) and isinstance(source.get("tenant"), str):
            sources.add(source["tenant"])
    return ChainExposure(held, exports, entries, len(namespaces), len(agents), len(sources))


def verify_chain(
    store: Store,
    tenant: str,
    hash_fn: HashFn,
    genesis: str,
    *,
    anchor: tuple[int, str] | None = None,
    rows: bool = True,
    signatures: SignatureFn | None = None,
) -> ChainReport:
    """Walks the chain once and reports every inconsistency found, then (``rows``) checks
    every memory row of the tenant against what the chain recorded of it. ``signatures``
    checks an entry's signature with the service's public key (None: signing is off).

    Safe against concurrent appends: the head read before the walk names entries
    that must exist; the head read after it must cover every entry walked.
    """
    report = ChainReport(tenant=tenant)
    scope = Scope(tenant)
    head_before = store.audit_head(scope)
    # hashes to compare after the walk: only the entries a head or the anchor names
    wanted = {h[0] for h in (head_before, anchor) if h is not None}
    seen: dict[int, str] = {}
    prev_hash = genesis
    expected_seq = 1
    last_ts: datetime | None = None
    ledger = RowLedger()
    signed_since = anchor[0] if anchor is not None else None  # every later entry signed
    for entry in iter_chain(store, tenant):
        report.entries += 1
        ledger.see(entry)
        report.problems.extend(_check_entry(entry, expected_seq, prev_hash, last_ts, hash_fn))
        if signatures is not None:
            problem = _check_signature(entry, signatures, signed_since)
            if problem is not None:
                report.problems.append(problem)
            if entry.signature is not None and (signed_since is None or entry.seq < signed_since):
                signed_since = entry.seq
        elif entry.signature is not None:  # no key here to check it with: say so
            report.unchecked_signatures += 1
        last_ts = entry.ts
        prev_hash = entry.hash
        expected_seq = entry.seq + 1
        if entry.seq in wanted:
            seen[entry.seq] = entry.hash
        report.last_seq = entry.seq
        report.last_hash = entry.hash
    head_after = store.audit_head(scope)
    report.head = head_after
    report.problems.extend(_check_heads(report, head_before, head_after, seen))
    if anchor is not None:
        report.problems.extend(_check_anchor(report, anchor, seen))
    if rows:  # the rows must be what the chain says (row_check.py)
        report.problems.extend(
            ChainProblem(k, None, m) for k, m in check_rows(store, tenant, ledger)
        )
    return report


def _check_entry(
    entry: AuditEntry,
    expected_seq: int,
    prev_hash: str,
    last_ts: datetime | None,
    hash_fn: HashFn,
) -> list[ChainProblem]:
    problems: list[ChainProblem] = []
    if entry.seq != expected_seq:
        kind = "gap" if entry.seq > expected_seq else "reordered"
        problems.append(
            ChainProblem(
                kind,
                entry.seq,
                f"expected seq {expected_seq}, found {entry.seq}: "
                + ("entries are missing" if kind == "gap" else "sequence runs backwards"),
            )
        )
    if hash_fn(entry) != entry.hash:
        problems.append(
            ChainProblem(
                "modified",
                entry.seq,
                f"entry {entry.seq} ({entry.action}) does not match its hash: "
                "its content was changed after it was written",
            )
        )
    if entry.prev_hash != prev_hash:
        problems.append(
            ChainProblem(
                "broken_link",
                entry.seq,
                f"entry {entry.seq} does not link to the entry before it: "
                "an entry was removed, inserted or moved",
            )
        )
    if last_ts is not None and entry.ts < last_ts:
        problems.append(
            ChainProblem(
                "reordered", entry.seq, f"entry {entry.seq} is older than the entry before it"
            )
        )
    return problems


def _check_signature(
    entry: AuditEntry, verify: SignatureFn, signed_since: int | None
) -> ChainProblem | None:
    if entry.signature is not None:
        if verify(entry):
            return None
        return ChainProblem(
            "bad_signature",
            entry.seq,
            f"entry {entry.seq} ({entry.action}) carries a signature the service's key did not "
            "make over it: it was forged, altered, or signed with another key",
        )
    if signed_since is not None and entry.seq > signed_since:
        return ChainProblem(
            "unsigned",
            entry.seq,
            f"entry {entry.seq} ({entry.action}) is not signed although entries since seq "
            f"{signed_since} must be: it was appended or rewritten without the signing key",
        )
    return None


def _check_heads(
    report: ChainReport,
    before: tuple[int, str] | None,
    after: tuple[int, str] | None,
    seen: dict[int, str],
) -> list[ChainProblem]:
    problems: list[ChainProblem] = []
    if before is not None:
        seq, digest = before
        if seq > report.last_seq:
            problems.append(
                ChainProblem(
                    "truncated",
                    seq,
                    f"the chain ends at seq {report.last_seq} but the store appended up to "
                    f"seq {seq}: the newest entries were removed",
                )
            )
        elif seen.get(seq) != digest:
            problems.append(
                ChainProblem(
                    "head_mismatch",
                    seq,
                    f"entry {seq} does not carry the hash the chain head recorded for it",
                )
            )
    if report.entries and (after is None or after[0] < report.last_seq):
        problems.append(
            ChainProblem(
                "head_mismatch",
                report.last_seq,
                f"the chain holds entries up to seq {report.last_seq} that its head record "
                f"({'none' if after is None else after[0]}) never recorded: entries were "
                "inserted around the append path, or the head record was rewound",
            )
        )
    return problems


def _check_anchor(
    report: ChainReport, anchor: tuple[int, str], seen: dict[int, str]
) -> list[ChainProblem]:
    seq, digest = anchor
    if seq > report.last_seq:
        return [
            ChainProblem(
                "truncated",
                seq,
                f"the saved anchor names seq {seq} but the chain ends at "
                f"seq {report.last_seq}: the newest entries were removed",
            )
        ]
    if seen.get(seq) != digest:
        return [
            ChainProblem(
                "anchor", seq, f"entry {seq} no longer has the hash recorded in the saved anchor"
            )
        ]
    return []


def deletion_log(store: AuditStore, tenant: str, limit: int) -> AuditEntries:
    """The newest ``limit`` entries about removed or hidden data, newest first.

    One filtered read of the store, not a walk of the chain: a tenant whose every write
    is an entry has as many entries as memories.
    """
    return store.read_audit_actions(Scope(tenant), sorted(DELETION_ACTIONS), limit)


def chain_page(
    store: AuditStore,
    tenant: str,
    hash_fn: HashFn,
    genesis: str,
    *,
    before_seq: int | None,
    limit: int,
) -> AuditPage:
    """``limit`` entries with ``seq < before_seq`` (the newest without it), newest first,
    each checked against its own hash and linked to the entry before it.

    Reads ``limit + 1`` entries by ``seq`` (the extra one is the oldest shown entry's
    predecessor), so a page costs the same at any chain length. The newest page also
    compares the newest entry with the head record (a truncated tail shows there). Rows
    are not compared: that needs the whole chain (``verify_chain``).
    """
    scope = Scope(tenant)
    head = store.audit_head(scope)
    last = store.last_audit(scope)
    last_seq = last.seq if last is not None else 0
    top = last_seq if before_seq is None else min(before_seq - 1, last_seq)
    page = AuditPage(tenant=tenant, head=head, last_seq=last_seq, before_seq=before_seq)
    if top < 1:
        page.problems.extend(_page_heads(before_seq, head, last))
        return page
    batch = [e for e in store.read_audit(scope, limit + 1, max(0, top - limit - 1)) if e.seq <= top]
    shown = batch[-limit:]
    problems: list[ChainProblem] = []
    first = shown[0] if shown else None
    pred = _predecessor(store, scope, batch, first)
    if first is None or first.seq == 1:  # the chain's start links to the genesis hash
        prev_hash, expected, last_ts = genesis, 1, None
    elif pred is not None:
        prev_hash, expected, last_ts = pred.hash, pred.seq + 1, pred.ts
    else:
        prev_hash, expected, last_ts = first.prev_hash, first.seq, None
        problems.append(
            ChainProblem(
                "gap", first.seq, f"entry {first.seq - 1}, before entry {first.seq}, is missing"
            )
        )
    for entry in shown:
        problems.extend(_check_entry(entry, expected, prev_hash, last_ts, hash_fn))
        prev_hash, expected, last_ts = entry.hash, entry.seq + 1, entry.ts
    if before_seq is None:
        problems.extend(_page_heads(before_seq, head, last))
    page.entries = list(reversed(shown))
    page.problems = problems
    if first is not None:
        page.older = first.seq if first.seq > 1 else None
    else:  # nothing left in this window: the next older window may still hold entries
        page.older = top - limit + 1 if top > limit else None
    return page


def _predecessor(
    store: AuditStore, scope: Scope, batch: list[AuditEntry], first: AuditEntry | None
) -> AuditEntry | None:
    """The entry at ``first.seq - 1``: in the batch already, else one more read."""
    if first is None or first.seq <= 1:
        return None
    want = first.seq - 1
    for entry in batch:
        if entry.seq == want:
            return entry
    found = store.read_audit(scope, 1, want - 1)
    return found[0] if found and found[0].seq == want else None


def _page_heads(
    before_seq: int | None, head: tuple[int, str] | None, last: AuditEntry | None
) -> list[ChainProblem]:
    """The newest entry against the head record (only on the newest page)."""
    if before_seq is not None:
        return []
    last_seq = last.seq if last is not None else 0
    if head is not None and head[0] > last_seq:
        return [
            ChainProblem(
                "truncated",
                head[0],
                f"the chain ends at seq {last_seq} but the store appended up to seq "
                f"{head[0]}: the newest entries were removed",
            )
        ]
    if last is not None and (head is None or head[0] < last.seq):
        return [
            ChainProblem(
                "head_mismatch",
                last.seq,
                f"the chain holds entries up to seq {last.seq} that its head record "
                f"({'none' if head is None else head[0]}) never recorded",
            )
        ]
    if last is not None and head is not None and head[1] != last.hash:
        return [
            ChainProblem(
                "head_mismatch",
                last.seq,
                f"entry {last.seq} does not carry the hash the chain head recorded for it",
            )
        ]
    return []
