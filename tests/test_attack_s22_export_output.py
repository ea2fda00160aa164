"""``attestor-arango export --output`` never writes over the store's own files: ``-o`` naming
the database overwrote it with the JSON (the store was then "not a database"), naming its
``-shm`` file killed the process with SIGBUS (SQLite maps that file; a server on the same
store would die too), and naming the export ledger erased the list a purge uses to delete
earlier exports. The refused exports run in a child process, so the old code's crash
fails the test instead of ending the test run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from interface_support import PYTHON, cli_env

from attestor_arango.interfaces.cli.main import main
from attestor_arango.interfaces.cli.output import EXIT_USAGE

CLI = [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "--json"]

COMPANIONS = ["", "-wal", "-shm", "-journal", ".idx", ".exports", ".reembed", ".reembed.paths"]


def _cli(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, str]:
    code = main(["--json", *args, "--path", str(db)])
    printed = capsys.readouterr()
    return code, printed.out if code == 0 else printed.err


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("suffix", COMPANIONS)
def test_export_refuses_to_write_over_the_store_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    suffix: str,
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db = tmp_path / "m.db"
    assert _cli(capsys, db, "add", "Ann likes tea", "--entity", "ann")[0] == 0
    assert _cli(capsys, db, "export", "-o", str(tmp_path / "first.json"))[0] == 0
    before = _files(tmp_path)
    targets = [tmp_path / f"m.db{suffix}"] + ([tmp_path / "." / "m.db"] if not suffix else [])
    for target in targets:
        done = subprocess.run(
            [*CLI, "export", "-o", str(target), "--path", str(db)],
            env=cli_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == EXIT_USAGE, (done.returncode, done.stderr[-500:])
        assert "--output" in done.stderr and "store" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert _files(tmp_path) == before
    code, out = _cli(capsys, db, "list")
    assert code == 0 and [m["content"] for m in json.loads(out)] == ["Ann likes tea"]


def test_export_still_writes_beside_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db = tmp_path / "m.db"
    assert _cli(capsys, db, "add", "Ann likes tea", "--entity", "ann")[0] == 0
    for name in ("m.db.json", "m.db.backup", "export.json"):
        assert _cli(capsys, db, "export", "-o", str(tmp_path / name))[0] == 0
        assert json.loads((tmp_path / name).read_text())["memories"]


def test_export_refuses_a_hard_link_to_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db = tmp_path / "m.db"
    assert _cli(capsys, db, "add", "Ann likes tea", "--entity", "ann")[0] == 0
    link = tmp_path / "looks-like-an-export.json"
    link.hardlink_to(db)
    code, err = _cli(capsys, db, "export", "-o", str(link))
    assert code == EXIT_USAGE and "store's own files" in err
    code, out = _cli(capsys, db, "list")
    assert code == 0 and [m["content"] for m in json.loads(out)] == ["Ann likes tea"]
