"""Session 20 attack battery: a write landing while its tenant's purge finished made the
untouched store look tampered with.

``verify_audit_chain`` replays the chain into the rows the tenant must hold; at a
``purge_completed`` entry it forgot every row. A write of the tenant that committed
after the purge had counted what was left, but before it recorded ``purge_completed``
(a service serving the tenant's agents while an operator erases it), kept its row and its
``add`` entry, yet the replay had forgotten it: "row_unrecorded ... inserted or moved
here", an alarm of tampering on a store nobody touched. A purge's completion now forgets
the rows the chain held when the purge began (``purge_attempted``); a row written during
the purge may have been erased or may remain, and either verifies.

The writes are made inside the purge (one of its later steps, or its first collection),
i.e. exactly in the window, with no timing involved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.governance import purge
from attestor_arango.memory import AgentMemory

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")


def _purge_with_a_write(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch, target: Any, name: str
) -> None:
    """``purge_user`` with ``Ann moved to Oslo`` added when the purge first calls
    ``target.name``."""
    original: Callable[..., Any] = getattr(target, name)
    written: list[str] = []

    def step(*args: Any, **kwargs: Any) -> Any:
        if not written:
            written.append(mem.add("Ann moved to Oslo", context=CTX).id)
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, step)
    report = mem.purge_user("acme", "erasure #1", context=CTX)
    monkeypatch.setattr(target, name, original)
    assert written and report.ok, report.error


def test_a_row_written_after_the_purge_counted_what_was_left_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    _purge_with_a_write(mem, monkeypatch, purge, "_drop_staged")  # after the count

    assert [m.content for m in mem.list(context=CTX)] == ["Ann moved to Oslo"]
    assert mem.verify_audit_chain(context=CTX).problems == []
    mem.close()


def test_a_row_written_before_the_purge_erased_it_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    _purge_with_a_write(mem, monkeypatch, mem.store, "purge_collection")  # first collection

    assert mem.list(context=CTX) == []
    assert mem.verify_audit_chain(context=CTX).problems == []
    mem.close()


def test_rows_the_purge_erased_stay_forgotten_and_a_later_row_is_checked(
    tmp_path: Path,
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    assert mem.purge_user("acme", "erasure #1", context=CTX).ok
    later = mem.add("Ann moved to Oslo", entity="ann", category="home", context=CTX)
    assert mem.verify_audit_chain(context=CTX).problems == []
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("DELETE FROM memories WHERE id = ?", (later.id,))  # around the write path
    kinds = [p.kind for p in mem.verify_audit_chain(context=CTX).problems]
    assert "row_missing" in kinds
    mem.close()


def test_a_purge_that_failed_because_of_a_write_leaves_a_chain_that_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write before the purge reached the memories (erased) and one after it (left, so
    the purge reports failure and records ``purge_failed``): neither is a problem."""
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX)
    original = mem.store.purge_collection
    written: dict[str, str] = {}

    def step(scope: Any, collection: str) -> int:
        if not written:
            written["erased"] = mem.add("Ann moved to Oslo", context=CTX).id
        elif collection == "write_counts" and "left" not in written:
            written["left"] = mem.add("Ann moved to Lima", context=CTX).id
        return original(scope, collection)

    monkeypatch.setattr(mem.store, "purge_collection", step)
    report = mem.purge_user("acme", "erasure #1", context=CTX)
    monkeypatch.setattr(mem.store, "purge_collection", original)
    assert not report.ok and set(written) == {"erased", "left"}

    assert [m.id for m in mem.list(context=CTX)] == [written["left"]]
    assert mem.verify_audit_chain(context=CTX).problems == []
    mem.close()
