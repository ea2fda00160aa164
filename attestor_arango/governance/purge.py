"""GDPR erasure of one tenant (a user IS a tenant), across every store.

Order of events, each durable before the next:

1. an audit entry ``purge_attempted`` (who, when, why, which tenant, and how
   many rows each collection held) -- so even a crash mid-way leaves a record;
2. one ``Store.purge_collection`` call per collection in
   ``Store.purge_collections()`` order, each its own commit, so progress made
   before a failure stays made and a re-run only removes what is left; then
   the process's memos of texts are emptied (``memo.forget_all``), so none
   keeps a word of the erased rows;
3. a scan of what the tenant still holds (``Store.tenant_residue``), and the
   store's files rewritten (``flush_erasure``: the embedded store's ``VACUUM`` and
   write-ahead log, ArangoDB's collection compaction);
4. the tenant's trace files deleted and its events removed from the shared trace file
   of earlier versions (``retrieval.trace.erase_tenant``: an atomic rewrite), under the
   configured trace path and under every other path the store traced to before
   (``core.trace_paths``: the path moved or tracing switched off); events there it
   cannot attribute to a tenant, or a delete or rewrite that failed, make the purge fail;
5. the tenant's vectors staged by an unfinished ``reembed`` removed from the staging file,
   the default one and any other a run was given (``staging_path``), and the export files
   ``export --output`` wrote of the tenant deleted (``governance.export_files``); a file
   that cannot be cleaned makes the purge fail;
6. a scan of the tenant's audit chain for what the purge cannot reach, reported as
   warnings: entries holding unkeyed digests written before salts
   (``legacy_digest_entries``) and exports taken of the tenant (copies outside the store);
7. an audit entry ``purge_completed`` or ``purge_failed`` with the counts. Rows found
   after every step that writes landing while the purge ran made (the tenant's audit
   entries after ``purge_attempted`` wrote them) are named (``written_during``), so such a
   failure reads as what it is, not as an erasure that did not work.

The tenant's daily quota is kept (``PurgeReport.kept``, the outcome entry's ``kept``): it is
the operator's limit on the tenant, not the subject's data, and every value it held is in
the kept chain already (``quota_set``). Erasing it let the tenant write without limit right
after the erasure. The day's write counters are the subject's activity and are erased.
The tenant's recall-id key (``core/recall_key.py``) is kept too: random bytes under the
tenant id the chain names anyway, no data of the subject; erasing it would give the
tenant's next recalls other ids in this process than in one that still holds the key.

The tenant's audit chain is kept: it is the legal record that the erasure
happened, and it holds ids, actions, counts and digests, never memory content
(core/audit.py enforces that for every entry); the ids include the tenant, the namespaces
and the agent ids each entry was made in and by, verbatim, and the report says so
(``kept["audit_chain"]``: the entries and how many namespaces, agent ids and tenants an
import came from). The reason
is kept as an ``hmac1:`` digest keyed by a random key made for this purge and stored
nowhere: the report hands it to the caller (``PurgeReport.reason_key``), who alone can
later prove what the reason was; a guessed reason (one naming the subject) cannot be
confirmed from the chain.
Entries written before schema 8 (rows without salts) hold plain digests of the rows' texts
that the chain cannot shed: the purge counts them (``legacy_digest_entries``) and warns
that an exact guess of an erased text can still be confirmed against them
(docs/design-notes.md, "What erasure cannot undo").
"""

from __future__ import annotations

import secrets
from typing import Any

from attestor_arango import validation
from attestor_arango.context import AgentContext
from attestor_arango.core import trace_paths
from attestor_arango.core.audit import Auditor
from attestor_arango.core.linefile import made_like_store
from attestor_arango.core.reembed import drop_staged_everywhere
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ValidationError
from attestor_arango.governance.audit_chain import chain_exposure
from attestor_arango.governance.export_files import erase_exports
from attestor_arango.memo import forget_all
from attestor_arango.reports import PurgeReport
from attestor_arango.scope import Scope


def check_reason(reason: object) -> str:
    """The purge's reason: required text (``validation.check_reason``'s limits)."""
    checked = validation.check_reason(reason, "purge reason")
    if checked is None:
        raise ValidationError(
            "purge needs a reason (e.g. 'GDPR erasure request #123'); it is kept in the audit log"
        )
    return checked


def _erase_traces(rt: Runtime, user: str, report: PurgeReport) -> None:
    """The tenant's recall-trace events out of the trace files, or what is left and why."""
    erased = trace_paths.erase_everywhere(rt.config, user, made_like_store(rt.config))
    if erased is None:  # tracing is off: nothing was written
        return
    report.removed["trace_events"] = erased.removed
    if report.remaining is None:
        return
    if erased.error is not None:
        report.remaining["trace_events"] = erased.left
        report.error = report.error or (
            f"the tenant's recall-trace events are still in the trace file: {erased.error}; "
            "fix the file's permissions (or erase it) and run purge_user again"
        )
    elif erased.unattributed:
        report.remaining["trace_events_unattributed"] = erased.unattributed
        report.error = report.error or (
            f"{erased.unattributed} events in the recall-trace file name no tenant (written "
            "by an older version, or unreadable) and may hold the subject's queries or ids: "
            "rotate or erase the trace file (config trace.path), then run purge_user again"
        )


def _drop_staged(rt: Runtime, user: str, report: PurgeReport) -> None:
    """The tenant's vectors an unfinished ``reembed`` staged, out of every staging file, or
    the files that still hold them and why."""
    _files_left(
        report,
        "reembed_staging_files",
        drop_staged_everywhere(rt.config, user),
        "the tenant's vectors staged by an unfinished reembed could not be removed from",
    )


def _files_left(report: PurgeReport, key: str, problems: list[str], what: str) -> None:
    """Files the purge could not clean (one problem a file), counted under ``key`` and named
    in the report's error, ``what`` saying what they hold; nothing when there are none."""
    if not problems:
        return
    if report.remaining is not None:
        report.remaining[key] = len(problems)
    report.error = report.error or (
        f"{what} {'; '.join(problems)}: fix or erase those files, then run purge_user again"
    )


def _erase_export_files(rt: Runtime, user: str, report: PurgeReport) -> None:
    """The export files of the tenant the service wrote (``export --output``), deleted, or
    the files that still hold them and why (``governance.export_files``)."""
    removed, problems = erase_exports(rt.config, user)
    if removed:
        report.removed["export_files"] = removed
    _files_left(
        report,
        "export_files",
        problems,
        "export files of the tenant written by `export --output` could not be deleted:",
    )


def _chain_notes(rt: Runtime, user: str, report: PurgeReport) -> None:
    """What the tenant's audit chain says the purge cannot reach, as warnings: entries
    holding unkeyed digests (written before salts), which outlive the rows and confirm an
    exact guess of their words; and exports taken of the tenant, copies outside the store
    that hold every word the purge erased (``export_user`` records each one). And what the
    chain keeps by design (``kept["audit_chain"]``): its entries, and the namespaces, agent
    ids and import source tenants they name verbatim, so a caller who made a person's name
    a namespace (a LangGraph namespace of user ids) or a tenant learns that the erasure
    leaves it in the record."""
    try:
        exposure = chain_exposure(rt.store, user)
    except Exception as exc:  # informative only: the erasure itself is not affected
        report.warnings.append(f"the audit chain could not be scanned: {exc}")
        return
    held, exports = exposure.legacy_digest_entries, exposure.exports
    report.legacy_digest_entries = held
    report.kept["audit_chain"] = {  # by design, and said: the ids it names stay verbatim
        "entries": exposure.entries,
        "namespaces": exposure.namespaces,
        "agent_ids": exposure.agent_ids,
        "source_tenants": exposure.source_tenants,
    }
    if held:
        report.warnings.append(
            f"{held} audit entries of this tenant were written before salts (schema 8) and "
            "hold plain SHA-256 digests of the erased rows' texts; the chain cannot be "
            "rewritten, so anyone who guesses an erased text exactly can confirm it against "
            "them (docs/design-notes.md, 'What erasure cannot undo')"
        )
    if exports:
        report.warnings.append(
            f"exports of this tenant taken before the purge: {exports} (the chain's "
            "'export' entries); the files `export --output` wrote and still held are deleted "
            f"({report.removed.get('export_files', 0)}), every other copy (an answer over the "
            "API, a file moved or copied, an import into another tenant) still holds the "
            "erased words: delete it"
        )


LATE_ENTRIES = 10_000  # audit entries after the attempt read to name rows written meanwhile
SHOWN = 10  # ids of such rows an error text names (the report lists them all)
RECORDED = 100  # and the outcome audit entry


def _written_during(rt: Runtime, scope: Scope, attempt_seq: int) -> list[str]:
    """Ids of the tenant's rows held now that entries after the purge's attempt wrote:
    writes that landed while it ran (every row change commits with its audit entry)."""
    try:
        later = rt.store.read_audit(scope, LATE_ENTRIES, after_seq=attempt_seq)
        targets = [e.target for e in later if e.target and not e.action.startswith("purge_")]
        held = rt.store.get_memories(scope, targets)
    except Exception:  # informative only: the residue is reported either way
        return []
    return [t for t in dict.fromkeys(targets) if t in held]


def _residue_error(report: PurgeReport, attempt_seq: int) -> str:
    """Why a purge that ran every step still found rows: writes that landed meanwhile, or not."""
    if not report.written_during:
        return "rows of the tenant remain after every collection was purged"
    ids = report.written_during
    shown = ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
    return (
        f"rows of the tenant remain after every collection was purged: {len(ids)} memories "
        f"were written after the purge began (audit entries after seq {attempt_seq}), by "
        f"writes landing while it ran: {shown}; stop the tenant's writers (revoke its keys) "
        "and run purge_user again to erase them"
    )


def purge_user(
    rt: Runtime, auditor: Auditor, ctx: AgentContext, user: str, reason: str
) -> PurgeReport:
    """Erases tenant ``user``; permission and reason are checked by the caller first."""
    store = rt.store
    scope = Scope(user)
    plan = list(store.purge_collections())
    try:
        before: dict[str, int] | None = store.tenant_residue(scope)
    except Exception:  # counting is informative only; the attempt is recorded regardless
        before = None
    # the reason's digest is keyed like a row's texts, by a key no store keeps (the module's
    # docstring): the caller gets it in the report, a guesser finds nothing to check against
    reason_key = secrets.token_hex(32)
    attempted = auditor.record(
        ctx,
        "purge_attempted",
        user,
        {"reason": reason, "scope": {"tenant": user, "namespace": None}, "holding": before},
        salt=reason_key,
    )
    report = PurgeReport(tenant=user, reason=reason, ok=False, reason_key=reason_key)
    report.attempted_audit_seq = attempted.seq
    try:
        quota = store.get_quota(scope)
    except Exception:  # informative only: the store keeps the quota either way
        quota = None
    if quota is not None:
        report.kept["quota"] = {"daily_writes": quota}
    for i, collection in enumerate(plan):
        try:  # each step commits on its own: progress before a failure stays made
            report.removed[collection] = store.purge_collection(scope, collection)
        except Exception as exc:
            report.failed_collection = collection
            report.error = f"{type(exc).__name__}: {exc}"
            report.not_attempted = plan[i + 1 :]
            break
    forget_all()  # the process's memos of texts: none may keep the erased words
    try:
        report.remaining = store.tenant_residue(scope)
    except Exception as exc:
        report.remaining = None
        report.error = report.error or f"counting what remains failed: {exc}"
    flush = getattr(store, "flush_erasure", None)  # a backend that rewrites its files
    if flush is not None and report.failed_collection is None:
        frames = int(flush())
        if frames and report.remaining is not None:
            report.remaining["wal_frames"] = frames
            report.error = report.error or (
                "the erased rows' old pages are still in the store's files: the embedded "
                "store's write-ahead log or file, because another connection (a second server "
                "or process on this file) holds a read transaction or the write lock; or "
                "ArangoDB collections that could not be compacted (see the server's log: the "
                "user may lack the right); fix that and run purge_user again to finish the "
                "erasure"
            )
    if report.failed_collection is None:
        _erase_traces(rt, user, report)
    _drop_staged(rt, user, report)
    _erase_export_files(rt, user, report)
    _chain_notes(rt, user, report)
    left = report.remaining is None or any(report.remaining.values())
    report.ok = report.failed_collection is None and not left
    if report.ok is False and report.error is None:
        report.written_during = _written_during(rt, scope, attempted.seq)
        report.error = _residue_error(report, attempted.seq)
    details: dict[str, Any] = {
        "reason": reason,
        "attempt_seq": attempted.seq,
        "removed": report.removed,
        "remaining": report.remaining,
        "warnings": len(report.warnings),
        "legacy_digest_entries": report.legacy_digest_entries,
        "kept": report.kept,
    }
    if not report.ok:
        details.update(
            {
                "failed_collection": report.failed_collection,
                "error": report.error,
                "not_attempted": report.not_attempted,
                # the first ids (an entry stays small), and how many there are
                "written_during": report.written_during[:RECORDED],
                "written_during_count": len(report.written_during),
            }
        )
    try:
        outcome = auditor.record(
            ctx,
            "purge_completed" if report.ok else "purge_failed",
            user,
            details,
            salt=reason_key,
        )
        report.outcome_audit_seq = outcome.seq
    except Exception as exc:  # the attempt entry already exists; report, do not hide
        report.ok = False
        report.error = (report.error + "; " if report.error else "") + (
            f"writing the outcome audit entry failed: {exc}"
        )
    return report
