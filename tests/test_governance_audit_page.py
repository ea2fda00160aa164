"""audit_page: the chain a page at a time, newest first, each shown entry's links checked.

The page reads ``limit + 1`` entries whatever the chain's length, so what it can find is
what those entries show: an edited entry, a removed predecessor, a broken link, and on
the newest page a truncated tail. Tamper tests use the attacker connection of
test_governance_audit (triggers dropped, rows rewritten in the SQLite file).
"""

from __future__ import annotations

import sqlite3

import pytest

from attestor_arango import ValidationError
from attestor_arango.memory import AgentMemory
from tests.test_governance_audit import ORCH, OTHER, attacker, chain_mem  # noqa: F401


def _walk(mem: AgentMemory, limit: int) -> list[list[int]]:
    pages, before = [], None
    while True:
        page = mem.audit_page(before_seq=before, limit=limit, context=ORCH)
        assert page.ok, page.problems
        pages.append([e.seq for e in page.entries])
        if page.older is None:
            return pages
        before = page.older


def test_pages_run_newest_first_and_cover_the_chain_once(mem: AgentMemory) -> None:
    for i in range(23):
        mem.auditor.record(ORCH, "note", f"t{i}", {"i": i})
    pages = _walk(mem, 10)
    assert pages == [list(range(23, 13, -1)), list(range(13, 3, -1)), [3, 2, 1]]
    first = mem.audit_page(limit=10, context=ORCH)
    assert first.last_seq == 23 and first.head is not None and first.head[0] == 23
    # the other tenant's chain is its own
    assert mem.audit_page(context=OTHER).entries == []


def test_an_edited_entry_shows_on_its_page_only(
    chain_mem: AgentMemory,  # noqa: F811
    attacker: sqlite3.Connection,  # noqa: F811
) -> None:
    last = chain_mem.audit_page(context=ORCH).last_seq
    attacker.execute("UPDATE audit SET target = 'forged' WHERE tenant = 'acme' AND seq = 3")
    holding = chain_mem.audit_page(before_seq=6, limit=4, context=ORCH)
    assert [e.seq for e in holding.entries] == [5, 4, 3, 2]
    assert [(p.kind, p.seq) for p in holding.problems] == [("modified", 3)]
    assert chain_mem.audit_page(before_seq=last + 1, limit=3, context=ORCH).ok  # far from it


def test_a_rehashed_edit_breaks_the_link_of_the_page_above_it(
    chain_mem: AgentMemory,  # noqa: F811
    attacker: sqlite3.Connection,  # noqa: F811
) -> None:
    from attestor_arango.core import audit as audit_log

    victim = chain_mem.audit_log(limit=10, context=ORCH)[3]  # seq 4
    forged = victim.model_copy(update={"action": "noop"})
    attacker.execute(
        "UPDATE audit SET action = 'noop', hash = ? WHERE tenant = 'acme' AND seq = ?",
        (audit_log.entry_hash(audit_log.hash_fields(forged)), victim.seq),
    )
    # the page starting just above the victim reads it as the predecessor and sees the break
    page = chain_mem.audit_page(before_seq=victim.seq + 3, limit=2, context=ORCH)
    assert [e.seq for e in page.entries] == [victim.seq + 2, victim.seq + 1]
    assert ("broken_link", victim.seq + 1) in {(p.kind, p.seq) for p in page.problems}


def test_a_removed_predecessor_is_a_gap(
    chain_mem: AgentMemory,  # noqa: F811
    attacker: sqlite3.Connection,  # noqa: F811
) -> None:
    attacker.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq = 4")
    page = chain_mem.audit_page(before_seq=7, limit=2, context=ORCH)
    assert [e.seq for e in page.entries] == [6, 5]
    assert ("gap", 5) in {(p.kind, p.seq) for p in page.problems}


def test_the_newest_page_sees_a_truncated_tail(
    chain_mem: AgentMemory,  # noqa: F811
    attacker: sqlite3.Connection,  # noqa: F811
) -> None:
    last = chain_mem.audit_page(context=ORCH).last_seq
    attacker.execute("DELETE FROM audit WHERE tenant = 'acme' AND seq > ?", (last - 2,))
    page = chain_mem.audit_page(limit=5, context=ORCH)
    assert page.entries[0].seq == last - 2
    assert [(p.kind, p.seq) for p in page.problems] == [("truncated", last)]


@pytest.mark.parametrize("bad", [0, -3, True, "5", 2.5])
def test_bad_cursors_are_refused(chain_mem: AgentMemory, bad: object) -> None:  # noqa: F811
    with pytest.raises(ValidationError):
        chain_mem.audit_page(before_seq=bad, context=ORCH)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        chain_mem.audit_page(limit=0, context=ORCH)
