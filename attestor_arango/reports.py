"""The reports services return: plain dataclasses, JSON-ready through ``to_dict``.

They sit in the foundation layer, apart from the services that make them, so the HTTP
client can decode every result without loading a store, numpy or the ingest engines
(``import attestor_arango.client`` stays light).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attestor_arango.models import AuditEntry

# a name for list[AuditEntry] usable inside classes that define a method called "list"
AuditEntries = list[AuditEntry]


@dataclass(frozen=True)
class ChainProblem:
    # modified | broken_link | gap | reordered | truncated | head_mismatch | anchor
    # | bad_signature | unsigned | the row kinds of governance/row_check.py
    kind: str
    seq: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seq": self.seq, "message": self.message}


@dataclass
class ChainReport:
    tenant: str
    entries: int = 0
    last_seq: int = 0
    last_hash: str | None = None
    head: tuple[int, str] | None = None
    problems: list[ChainProblem] = field(default_factory=list)
    # signed entries whose signature was not checked: the verifier has no signing key
    unchecked_signatures: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def signature_note(self) -> str | None:
        """What a reader must know when signatures went unchecked, or None."""
        if not self.unchecked_signatures:
            return None
        return (
            f"{self.unchecked_signatures} signed entries were not checked: signing is off "
            "where this ran (set ATTESTOR_SIGNING=1, and ATTESTOR_SIGNING_KEY to the store's "
            "key if it is not the default one, to check them)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "ok": self.ok,
            "entries": self.entries,
            "last_seq": self.last_seq,
            "last_hash": self.last_hash,
            "head": list(self.head) if self.head else None,
            "problems": [p.to_dict() for p in self.problems],
            "unchecked_signatures": self.unchecked_signatures,
        }


@dataclass
class AuditPage:
    """One page of a tenant's audit chain, newest first, with the checks a page can make.

    ``problems`` come from these entries alone: each entry's own hash, its link to the
    entry before it (also for the oldest shown, whose predecessor is read too), and on
    the newest page the head record. Whether the rest of the chain and the memory rows
    agree is what ``verify_audit_chain`` answers. ``older`` is the ``before_seq`` of the
    next older page (None at the start of the chain).
    """

    tenant: str
    entries: list[AuditEntry] = field(default_factory=list)
    problems: list[ChainProblem] = field(default_factory=list)
    head: tuple[int, str] | None = None
    last_seq: int = 0
    before_seq: int | None = None
    older: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class PurgeReport:
    """What a purge removed and, when it failed part-way, what is left."""

    tenant: str
    reason: str
    ok: bool
    removed: dict[str, int] = field(default_factory=dict)
    remaining: dict[str, int] | None = None  # None: the store could not even be counted
    failed_collection: str | None = None
    error: str | None = None
    not_attempted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # copies outside the store to handle
    attempted_audit_seq: int | None = None
    outcome_audit_seq: int | None = None
    # the key of the reason's digest in the audit chain (``hmac1:``), kept by no store: only
    # its holder can later prove what the reason was (``audit.digest_text(reason, key)``)
    reason_key: str | None = None
    # audit entries of the tenant holding unkeyed digests (written before salts): they
    # outlive the erasure and confirm an exact guess of an erased text; None: not counted
    legacy_digest_entries: int | None = None
    # what the purge left on purpose: the operator's configuration of the tenant (its daily
    # quota), not the subject's data; its values are in the kept chain (``quota_set``); and
    # the audit chain, its entries and the namespaces and agent ids they name verbatim
    kept: dict[str, Any] = field(default_factory=dict)
    # ids of the rows held after the purge that were written after it began (the tenant's
    # audit entries after ``purge_attempted``): writes that landed while it ran
    written_during: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "completed" if self.ok else "failed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "reason": self.reason,
            "status": self.status,
            "ok": self.ok,
            "removed": dict(self.removed),
            "remaining": None if self.remaining is None else dict(self.remaining),
            "failed_collection": self.failed_collection,
            "error": self.error,
            "not_attempted": list(self.not_attempted),
            "warnings": list(self.warnings),
            "attempted_audit_seq": self.attempted_audit_seq,
            "outcome_audit_seq": self.outcome_audit_seq,
            "reason_key": self.reason_key,
            "legacy_digest_entries": self.legacy_digest_entries,
            "kept": dict(self.kept),
            "written_during": list(self.written_during),
        }


@dataclass
class PolicyOutcome:
    policy: str
    action: str
    matched: list[str] = field(default_factory=list)
    applied: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "action": self.action,
            "matched": list(self.matched),
            "applied": self.applied,
            "error": self.error,
        }


@dataclass
class RetentionReport:
    tenant: str
    dry_run: bool
    outcomes: list[PolicyOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.error is None for o in self.outcomes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "dry_run": self.dry_run,
            "ok": self.ok,
            "policies": [o.to_dict() for o in self.outcomes],
        }


@dataclass(frozen=True)
class ConsolidationReport:
    episodes: int
    counts: dict[str, int] = field(default_factory=dict)
    memory_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "counts": dict(self.counts),
            "memory_ids": list(self.memory_ids),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Reflection:
    user: str | None
    episodes: int
    stable_preferences: tuple[dict[str, Any], ...]
    stable_constraints: tuple[dict[str, Any], ...]
    changed_beliefs: tuple[dict[str, Any], ...]
    contradictions_for_review: tuple[dict[str, Any], ...]
    memory_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "episodes": self.episodes,
            "stable_preferences": list(self.stable_preferences),
            "stable_constraints": list(self.stable_constraints),
            "changed_beliefs": list(self.changed_beliefs),
            "contradictions_for_review": list(self.contradictions_for_review),
            "memory_id": self.memory_id,
        }

    def summary(self) -> str:
        def join(items: tuple[dict[str, Any], ...], key: str) -> str:
            return "; ".join(str(i[key]) for i in items) or "none"

        return (
            f"Reflection over {self.episodes} episodes"
            + (f" of {self.user}" if self.user else "")
            + f". Stable preferences: {join(self.stable_preferences, 'statement')}."
            + f" Stable constraints: {join(self.stable_constraints, 'statement')}."
            + f" Changed beliefs: {len(self.changed_beliefs)}."
            + f" Contradictions flagged for human review: {len(self.contradictions_for_review)}."
        )
