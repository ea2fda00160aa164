"""Declarative retention: archive or delete memories by namespace, category, tags and age.

A policy in YAML (a list under ``retention:`` in the config file, or a file
holding the list)::

    - name: scratch-cleanup
      action: delete          # archive | delete
      namespace: scratch      # optional; omitted = every namespace
      category: note          # optional
      tags: [temp, draft]     # optional; any of these
      older_than: 30d         # required: s, m, h, d or w; age is transaction time

``archive`` closes active rows (status archived); history stays replayable.
``delete`` removes rows of any status outright, like a purge of those rows:
an audit entry is written first, the rows removed, then the outcome audited.
A dry run only lists what each policy would change and writes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.config import load_yaml
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import Auditor
from attestor_arango.core.paging import all_memories
from attestor_arango.core.reembed import drop_staged_everywhere
from attestor_arango.core.runtime import Runtime
from attestor_arango.errors import ValidationError, shown
from attestor_arango.memo import forget_all
from attestor_arango.models import Memory
from attestor_arango.reports import PolicyOutcome, RetentionReport
from attestor_arango.scope import Scope, TemporalView, check_name
from attestor_arango.store.protocol import MemoryFilter, MemoryStore
from attestor_arango.validation import check_label, check_tags, model_problems

# policies one run may hold: each is a pass over the tenant's rows (a transaction and an
# audit entry when it matches), and a run reaches the service from REST and MCP callers
MAX_POLICIES = 100
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_US = {
    "s": 1_000_000,
    "m": 60_000_000,
    "h": 3_600_000_000,
    "d": 86_400_000_000,
    "w": 7 * 86_400_000_000,
}


def parse_age(value: object) -> int:
    """'30d', '12h', '2w' or a number of days -> microseconds (> 0)."""
    if isinstance(value, bool):
        raise ValidationError("an age must be like '30d', '12h' or a number of days")
    if isinstance(value, int | float) and not abs(value) < 4_000_000:  # ~10,000 years; NaN
        raise ValidationError("an age must be a finite number of days below 4,000,000")
    if isinstance(value, int | float):
        us = round(value * _UNIT_US["d"])
    elif isinstance(value, str) and len(value) <= 32 and (match := _AGE.match(value)):
        us = round(float(match.group(1)) * _UNIT_US[match.group(2)])
        if us > 4_000_000 * _UNIT_US["d"]:
            raise ValidationError("an age must be below 4,000,000 days")
    else:
        raise ValidationError(
            f"age {shown(value)} is not understood; "
            "write a number and a unit: 90s, 15m, 12h, 30d, 2w"
        )
    if us <= 0:
        raise ValidationError("an age must be greater than zero")
    return us


class RetentionPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=128)
    action: Literal["archive", "delete"]
    older_than: str | int | float
    namespace: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        """A label, as every other name (``check_label``): the report echoes it, and the CLI
        prints it, so no control character and no blank."""
        return str(check_label(value, "name"))

    @field_validator("older_than")
    @classmethod
    def _age(cls, value: str | int | float) -> str | int | float:
        parse_age(value)
        return value

    @field_validator("namespace")
    @classmethod
    def _ns(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value, "namespace")

    @field_validator("category")
    @classmethod
    def _category(cls, value: str | None) -> str | None:
        """As ``add`` stores a category (``check_label``): else it could match no row."""
        return check_label(value, "category")

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """As ``add`` stores tags (``check_tags``: at most ``MAX_TAGS``)."""
        return None if value is None else check_tags(value)

    @property
    def age_us(self) -> int:
        return parse_age(self.older_than)


def load_policies(source: object) -> list[RetentionPolicy]:
    """From a list of mappings or a YAML string holding a list: data only, never a path.

    A policy source reaches this from callers of every trust (REST, MCP), so it never
    names a file: reading one would let a caller probe and read the server's disk. The
    CLI reads a policy file itself and passes its content. Raises ``ValidationError``
    for a malformed policy, a repeated name or more than ``MAX_POLICIES`` policies.
    """
    raw: Any = source
    if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source.strip() and ":" not in source
    ):
        raise ValidationError(
            "retention policies are data, not a file name: pass a list of policies "
            "(name, action, older_than...), or their YAML text; the CLI reads --policies FILE"
        )
    if isinstance(raw, str):
        try:
            raw = load_yaml(raw, "retention policies")
        except yaml.YAMLError as exc:
            raise ValidationError(f"retention policies are not valid YAML: {exc}") from exc
    if isinstance(raw, dict) and "retention" in raw:
        raw = raw["retention"]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValidationError("retention policies must be a list of mappings")
    if len(raw) > MAX_POLICIES:
        raise ValidationError(
            f"{len(raw)} retention policies given; a run takes at most {MAX_POLICIES}: "
            "merge policies (tags match any of a list) or run them in several calls"
        )
    policies: list[RetentionPolicy] = []
    for i, item in enumerate(raw):
        try:
            policies.append(RetentionPolicy.model_validate(item))
        except PydanticValidationError as exc:
            raise ValidationError(
                f"retention policy #{i + 1} is invalid: {model_problems(exc)}"
            ) from exc
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        raise ValidationError("retention policy names must be unique")
    return policies


def matching(store: MemoryStore, tenant: str, policy: RetentionPolicy, now_us: int) -> list[Memory]:
    """Rows the policy applies to at ``now_us``, oldest first."""
    cutoff = now_us - policy.age_us
    scope = Scope(tenant, policy.namespace)
    include_closed = policy.action == "delete"
    view = TemporalView(as_of=now_us, include_closed=include_closed)
    filters = MemoryFilter(category=policy.category, tags=policy.tags)
    found: list[Memory] = []
    for m in all_memories(store, scope, filters, view):
        if m.us("t_created") >= cutoff:
            break  # ordered by t_created: nothing later is old enough
        found.append(m)
    return found


def unfinished(rt: Runtime, tenant: str, action: str) -> bool:
    """Whether the tenant's last ``action`` run (``compact``, ``retention_delete``) was
    killed after its attempt entry: no outcome followed it, so its rows may be deleted while
    the store's files still hold their bytes (the rewrite comes after the delete). A run
    that then finds no row to remove finishes it (``delete_audited`` with no ids)."""
    trail = [f"{action}_attempted", action, f"{action}_failed"]
    newest = rt.store.read_audit_actions(Scope(tenant), trail, 1)
    return bool(newest) and newest[0].action == f"{action}_attempted"


def delete_audited(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    action: str,
    ids: list[str],
    details: dict[str, Any],
) -> int:
    """Hard-deletes rows the way a purge does: audit first, remove, audit the outcome.

    Like a purge it leaves no word of the rows behind: the process's memos of texts
    are emptied, the vectors an unfinished ``reembed`` staged for the rows dropped, and
    the write-ahead log flushed (frames another connection's open read kept there are
    counted in the outcome entry, ``wal_frames``)."""
    tenant = ctx.tenant
    attempt = auditor.record(ctx, f"{action}_attempted", tenant, {**details, "ids": ids})
    try:
        with rt.store.transaction():
            removed = rt.store.delete_memories(Scope(tenant), ids)
        forget_all()  # the process's memos of texts: none may keep the removed words
    except Exception as exc:
        auditor.record(
            ctx,
            f"{action}_failed",
            tenant,
            {**details, "attempt_seq": attempt.seq, "error": f"{type(exc).__name__}: {exc}"},
        )
        raise
    done = {**details, "attempt_seq": attempt.seq, "removed": removed}
    staging = drop_staged_everywhere(rt.config, tenant, ids)  # an unfinished reembed's
    if staging:  # the removed rows' vectors are still staged there: on record
        done["staging_files_left"] = len(staging)
    flush = getattr(rt.store, "flush_erasure", None)  # a backend that rewrites its files
    if flush is not None:  # no old page image of a removed row stays in the files
        frames = int(flush())
        if frames:  # another connection's open read holds them: on record
            done["wal_frames"] = frames
    auditor.record(ctx, action, tenant, done)
    return removed


def apply_retention(
    rt: Runtime,
    auditor: Auditor,
    ctx: AgentContext,
    policies: list[RetentionPolicy],
    dry_run: bool,
) -> RetentionReport:
    tenant = ctx.tenant
    report = RetentionReport(tenant=tenant, dry_run=dry_run)
    for policy in policies:
        now = rt.clock.now_us()
        rows = matching(rt.store, tenant, policy, now)
        outcome = PolicyOutcome(policy.name, policy.action, [m.id for m in rows])
        report.outcomes.append(outcome)
        details = {"policy": policy.model_dump(mode="json"), "count": len(rows)}
        finish = not dry_run and not rows and policy.action == "delete"
        if finish and unfinished(rt, tenant, "retention_delete"):  # a killed run's rewrite
            delete_audited(rt, auditor, ctx, "retention_delete", [], details)
        if dry_run or not rows:
            continue
        try:
            if policy.action == "archive":
                with rt.store.transaction():
                    for m in rows:
                        rt.store.close_memory(
                            Scope(tenant, m.namespace), m.id, now, "archived", None
                        )
                    auditor.record(
                        ctx,
                        "retention_archive",
                        tenant,
                        {**details, "ids": outcome.matched, "at": now},
                    )
                outcome.applied = len(rows)
            else:
                outcome.applied = delete_audited(
                    rt, auditor, ctx, "retention_delete", outcome.matched, details
                )
        except Exception as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"
    if not dry_run:
        # the run itself is on record, even when no policy matched anything
        summary = [
            {
                "policy": o.policy,
                "action": o.action,
                "matched": len(o.matched),
                "applied": o.applied,
                "error": o.error,
            }
            for o in report.outcomes
        ]
        auditor.record(ctx, "retention_run", tenant, {"policies": summary, "ok": report.ok})
    return report
