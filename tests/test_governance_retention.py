"""Retention policies (archive / delete by namespace, category, tags, age) and compaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole, ValidationError
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError
from attestor_arango.governance.retention import load_policies, parse_age
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope

ORCH = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="work")
SCRATCH = AgentContext(
    agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="acme", namespace="scratch"
)
BETA = AgentContext(agent_id="b", role=AgentRole.ORCHESTRATOR, tenant="beta", namespace="scratch")

POLICIES = """
retention:
  - name: scratch-cleanup
    action: delete
    namespace: scratch
    older_than: 7d
  - name: archive-old-drafts
    action: archive
    tags: [draft]
    older_than: 30d
"""


def _seed(mem: AgentMemory, clock: ManualClock) -> dict[str, str]:
    ids = {}
    ids["old_scratch"] = mem.add("old scratch note", context=SCRATCH).id
    ids["old_draft"] = mem.add("old draft plan", tags=["draft"], context=ORCH).id
    ids["old_keep"] = mem.add("old but kept fact", tags=["final"], context=ORCH).id
    mem.add("beta scratch note", context=BETA)
    clock.advance(days=20)
    ids["mid_scratch"] = mem.add("mid scratch note", context=SCRATCH).id
    ids["mid_draft"] = mem.add("mid draft plan", tags=["draft"], context=ORCH).id
    clock.advance(days=15)
    ids["new_scratch"] = mem.add("fresh scratch note", context=SCRATCH).id
    return ids


def test_parse_age_and_policy_validation() -> None:
    assert parse_age("7d") == 7 * 86_400_000_000
    assert parse_age("12h") == 12 * 3_600_000_000
    assert parse_age(1.5) == 129_600_000_000
    for bad in ("7 days", "", "-3d", "0d", True, None):
        with pytest.raises(ValidationError):
            parse_age(bad)
    for bad_yaml in (
        "- {name: a, action: shred, older_than: 1d}",
        "- {name: a, action: delete}",
        "- {name: a, action: delete, older_than: 1d, colour: red}",
        "- {name: a, action: delete, older_than: 1d}\n- {name: a, action: archive, older_than: 2d}",
        "- {name: a, action: delete, older_than: 1d, namespace: 'bad ns'}",
        "{not: a list}",
        "- [unclosed",
    ):
        with pytest.raises(ValidationError):
            load_policies(bad_yaml)


def test_policies_are_data_never_a_path(tmp_path: Path) -> None:
    path = tmp_path / "retention.yaml"
    path.write_text(POLICIES, encoding="utf-8")
    policies = load_policies(POLICIES)
    assert [(p.name, p.action, p.namespace, p.tags) for p in policies] == [
        ("scratch-cleanup", "delete", "scratch", None),
        ("archive-old-drafts", "archive", None, ("draft",)),
    ]
    for source in (path, str(path), tmp_path / "missing.yaml", "~/x.yaml"):
        with pytest.raises(ValidationError, match="not a file name"):
            load_policies(source)


def test_dry_run_lists_and_changes_nothing(mem: AgentMemory, clock: ManualClock) -> None:
    ids = _seed(mem, clock)
    before = mem.store.count_rows(Scope("acme"))
    report = mem.apply_retention(POLICIES, dry_run=True, context=ORCH)
    assert report.dry_run and report.ok
    matched = {o.policy: o.matched for o in report.outcomes}
    assert matched == {
        "scratch-cleanup": [ids["old_scratch"], ids["mid_scratch"]],
        "archive-old-drafts": [ids["old_draft"]],
    }
    assert all(o.applied == 0 for o in report.outcomes)
    assert mem.store.count_rows(Scope("acme")) == before


def test_run_archives_and_deletes_with_audit(mem: AgentMemory, clock: ManualClock) -> None:
    ids = _seed(mem, clock)
    beta_before = mem.store.count_rows(Scope("beta"))
    report = mem.apply_retention(POLICIES, context=ORCH)
    assert report.ok and [o.applied for o in report.outcomes] == [2, 1]
    # delete: rows gone from every store, fresh scratch note kept
    assert mem.store.get_memories(Scope("acme"), [ids["old_scratch"], ids["mid_scratch"]]) == {}
    assert [m.id for m in mem.list(context=SCRATCH)] == [ids["new_scratch"]]
    hits = mem.search("scratch note", status="all", context=SCRATCH)
    assert [m.id for m in hits] == [ids["new_scratch"]]
    # archive: hidden from current reads, kept for history
    assert ids["old_draft"] not in {m.id for m in mem.list(context=ORCH)}
    archived = mem.get(ids["old_draft"], context=ORCH)
    assert archived.status.value == "archived"
    assert {m.id for m in mem.list(context=ORCH)} == {ids["old_keep"], ids["mid_draft"]}
    # other tenants untouched even though their scratch note is old
    assert mem.store.count_rows(Scope("beta")) == beta_before
    # audit: delete attempt before, outcome after; archive after
    log = [(e.action, e.details.get("count")) for e in mem.audit_log(limit=100, context=ORCH)]
    assert log[-4:] == [
        ("retention_delete_attempted", 2),
        ("retention_delete", 2),
        ("retention_archive", 1),
        ("retention_run", None),
    ]
    assert mem.verify_audit_chain(context=ORCH).ok
    # a second run finds nothing left to do
    again = mem.apply_retention(POLICIES, context=ORCH)
    assert [o.matched for o in again.outcomes] == [[], []]
    last = mem.audit_log(limit=100, context=ORCH)[-1]
    assert last.action == "retention_run"
    assert [p["matched"] for p in last.details["policies"]] == [0, 0]
    # a dry run writes nothing, not even an audit entry
    n = len(mem.audit_log(limit=1000, context=ORCH))
    mem.apply_retention(POLICIES, dry_run=True, context=ORCH)
    assert len(mem.audit_log(limit=1000, context=ORCH)) == n


def test_default_policies_come_from_config(tmp_path: Path, clock: ManualClock) -> None:
    config = Config(
        path=str(tmp_path / "r.db"),
        retention=[
            {"name": "all-scratch", "action": "delete", "namespace": "scratch", "older_than": "1d"}
        ],
    )
    mem = AgentMemory(
        config=config, embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(1)
    )
    mem.add("scratch", context=SCRATCH)
    clock.advance(days=2)
    report = mem.apply_retention(context=ORCH)
    assert [o.applied for o in report.outcomes] == [1]
    mem.close()


def test_a_failing_delete_is_audited_and_reported(mem: AgentMemory, clock: ManualClock) -> None:
    _seed(mem, clock)
    real = mem.store

    class Failing:
        def delete_memories(self, scope: Scope, ids: object) -> int:
            raise StoreError("disk full")

        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

    mem.store = Failing()  # type: ignore[assignment]
    report = mem.apply_retention(POLICIES, context=ORCH)
    mem.store = real
    assert not report.ok and "disk full" in (report.outcomes[0].error or "")
    actions = [e.action for e in mem.audit_log(limit=100, context=ORCH)]
    assert actions[-4:] == [
        "retention_delete_attempted",
        "retention_delete_failed",
        "retention_archive",
        "retention_run",
    ]
    run = mem.audit_log(limit=100, context=ORCH)[-1]
    assert run.details["ok"] is False
    assert [p["applied"] for p in run.details["policies"]] == [0, 1]
    assert len(mem.list(context=SCRATCH)) == 3  # nothing was deleted


def test_compact_removes_only_rows_archived_long_enough(
    mem: AgentMemory, clock: ManualClock
) -> None:
    a = mem.add("archived long ago", context=ORCH)
    b = mem.add("archived recently", context=ORCH)
    c = mem.add("Alice v1", entity="alice", category="role", context=ORCH)
    mem.add("Alice v2", entity="alice", category="role", context=ORCH)  # supersedes c
    mem.forget(a.id, context=ORCH)
    clock.advance(days=40)
    mem.forget(b.id, context=ORCH)
    dry = mem.compact(older_than="30d", dry_run=True, context=ORCH)
    assert dry["matched"] == [a.id] and dry["removed"] == 0
    result = mem.compact(older_than="30d", context=ORCH)
    assert result["removed"] == 1
    assert mem.store.get_memory(Scope("acme"), a.id) is None
    assert mem.store.get_memory(Scope("acme"), b.id) is not None
    assert mem.store.get_memory(Scope("acme"), c.id) is not None  # superseded history stays
    log = [e.action for e in mem.deletion_audit_log(limit=2, context=ORCH)]
    assert log == ["compact", "compact_attempted"]
    with pytest.raises(ValidationError):
        mem.compact(older_than="soon", context=ORCH)
