"""The open transaction's own kept values (``SQLiteConnection.pending_state``): the last
``"state"`` op of a (kind, tenant) wins unless a ``"drop"`` of the tenant came after it;
nothing outside a transaction or after it ended. Kept as indexes beside the queue, so a
long batch (5000 turns) reads it in O(1) rather than scanning the queue each write."""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango.store.embedded.connection import SQLiteConnection


def test_last_state_wins_unless_a_drop_came_after(tmp_path: Path) -> None:
    db = SQLiteConnection(tmp_path / "m.db")
    assert db.pending_state("quota", "acme") == ("", None)
    with db.transaction():
        assert db.pending_state("quota", "acme") == ("", None)
        db.after_commit("state", ("quota", "acme", 1))
        db.after_commit("text", ("acme", "x"))
        db.after_commit("state", ("quota", "acme", 2))
        assert db.pending_state("quota", "acme") == ("state", 2)
        assert db.pending_state("space", "acme") == ("", None)
        assert db.pending_state("quota", "beta") == ("", None)
        db.after_commit("drop", "acme")
        assert db.pending_state("quota", "acme") == ("drop", None)
        assert db.pending_state("space", "acme") == ("drop", None)
        db.after_commit("state", ("quota", "acme", 3))
        assert db.pending_state("quota", "acme") == ("state", 3)
        assert db.pending_state("space", "acme") == ("drop", None)
    assert db.pending_state("quota", "acme") == ("", None)


def test_a_rolled_back_queue_says_nothing_next_time(tmp_path: Path) -> None:
    db = SQLiteConnection(tmp_path / "m.db")
    with pytest.raises(RuntimeError), db.transaction():
        db.after_commit("state", ("quota", "acme", 1))
        raise RuntimeError("refused")
    with db.transaction():
        assert db.pending_state("quota", "acme") == ("", None)
