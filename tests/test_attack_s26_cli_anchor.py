"""``attestor-arango audit --verify --anchor SEQ:HASH``: the CLI checks a saved anchor.

The anchor is what catches a chain whose newest entries were deleted and whose head record
was rewound to match (docs/design-notes.md, "Limits of the threat model": save an anchor).
``verify_audit_chain(anchor=...)`` and REST took one; the CLI, the operator's tool, did not,
so a removed ``forget`` (the memory un-forgotten, the entry deleted, the head rewound)
verified as intact there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from interface_support import run_cli as cli


def verify(home: Path, *args: str) -> tuple[int, Any]:
    done = cli(home, "audit", "--verify", *args, "--json")
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else done.stderr


def _store_with_a_forget(home: Path) -> tuple[str, int, str]:
    for text in ("Ann lives in Oslo", "Ann likes tea"):
        assert cli(home, "add", text, "--json").returncode == 0
    gone = json.loads(cli(home, "add", "Ann's old phone", "--json").stdout)["id"]
    assert cli(home, "forget", gone, "--json").returncode == 0
    code, report = verify(home)
    assert code == 0 and report["ok"]
    return gone, report["last_seq"], report["last_hash"]


def _remove_the_forget(db: Path, gone: str, last_seq: int) -> None:
    """Un-forgets the row, deletes its forget entry and rewinds the head to match."""
    conn = sqlite3.connect(db)
    for trigger in ("audit_no_delete", "audit_heads_forward_only"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute(
        "UPDATE memories SET t_expired = 253402300799000000, status = 'active' WHERE id = ?",
        (gone,),
    )
    conn.execute("DELETE FROM audit WHERE seq = ?", (last_seq,))
    conn.execute(
        "UPDATE audit_heads SET seq = seq - 1, hash = (SELECT hash FROM audit WHERE seq = ?)",
        (last_seq - 1,),
    )
    conn.commit()
    conn.close()


def test_a_saved_anchor_catches_a_removed_tail_from_the_cli(tmp_path: Path) -> None:
    gone, last_seq, last_hash = _store_with_a_forget(tmp_path)
    _remove_the_forget(tmp_path / "memory.db", gone, last_seq)
    code, report = verify(tmp_path)  # without the anchor the rewritten chain is consistent
    assert code == 0 and report["ok"]
    code, report = verify(tmp_path, "--anchor", f"{last_seq}:{last_hash}")
    assert code == 1 and not report["ok"]
    assert [p["kind"] for p in report["problems"]] == ["truncated"]


def test_an_intact_chain_verifies_against_its_anchor(tmp_path: Path) -> None:
    _, last_seq, last_hash = _store_with_a_forget(tmp_path)
    code, report = verify(tmp_path, "--anchor", f"{last_seq}:{last_hash}")
    assert code == 0 and report["ok"]
    code, report = verify(tmp_path, "--anchor", f"{last_seq}:{'0' * 64}")
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["anchor"]


def test_a_malformed_anchor_is_refused_with_its_form(tmp_path: Path) -> None:
    _store_with_a_forget(tmp_path)
    for bad in ("5", "x:" + "0" * 64, "0:" + "0" * 64, "5:abc", f"5:{'G' * 64}"):
        done = cli(tmp_path, "audit", "--verify", "--anchor", bad, "--json")
        assert done.returncode == 2, (bad, done.stdout)
        assert "SEQ:HASH" in done.stderr, done.stderr
