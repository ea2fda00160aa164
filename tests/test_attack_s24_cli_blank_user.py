"""Adversarial finding: ``purge --user ""`` erased the caller's own tenant.

``purge`` and ``export`` take the tenant to act on as ``--user`` (default: the caller's
tenant). The flag given empty was read as absent (``args.user or <own tenant>``), so a
script running ``attestor-arango purge --user "$SUBJECT" --yes --reason ...`` with a blank
``$SUBJECT`` erased every memory of the operator's own tenant instead of failing, and
``export --user ""`` exported it. ``--tenant ""`` was already refused for this reason
(cli/commands.py, ``open_memory``) and so was ``audit --verify --user ""``. A blank
``--user`` is now refused the same way (exit 2) and nothing changes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attestor_arango.interfaces.cli.main import main


def _rows(path: Path) -> list[str]:
    """Every row of every table of the store, audit chain included, in a fixed order."""
    db = sqlite3.connect(path)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        names.sort()
        return [f"{n}: {sorted(map(repr, db.execute(f'SELECT * FROM {n}')))}" for n in names]
    finally:
        db.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["purge", "--user", "", "--yes", "--reason", "GDPR erasure #1"],
        ["purge", "--user", "", "--yes", "--reason", "GDPR erasure #1", "--tenant", "acme"],
        ["export", "--user", ""],
        ["export", "--user", "", "--output", "out.json"],
    ],
)
def test_a_blank_user_is_refused_and_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    db = tmp_path / "m.db"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTESTOR_PATH", str(db))
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    for tenant in ("local", "acme"):
        assert main(["add", f"{tenant} keeps this", "--tenant", tenant, "--json"]) == 0
    before = _rows(db)
    capsys.readouterr()
    assert main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "user" in captured.err
    assert _rows(db) == before
    assert not (tmp_path / "out.json").exists()
