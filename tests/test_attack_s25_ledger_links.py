"""Session 25 attack: a list beside the store was written through a planted symlink.

The export ledger and the re-embedding's staging list are rewritten whole through a
temporary file named ``.<list>.<pid>`` beside them, then renamed over the list. For an
ArangoDB store (no database file to take permission bits from) that name was opened
with ``write_text``, which follows a symlink: anyone able to write in that folder could
plant ``.exports-db.jsonl.<pid>`` -> any file of the user, and the next export or purge
truncated that file and wrote the ledger into it. The temporary file is now removed and
created anew (``O_EXCL``, which no symlink satisfies), so a planted link is never
followed; the list is written as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attestor_arango.config import Config
from attestor_arango.core.linefile import read_lines, update_lines
from attestor_arango.governance import export_files


def _plant(folder: Path, name: str, target: Path) -> Path:
    link = folder / f".{name}.{os.getpid()}"
    link.symlink_to(target)
    return link


@pytest.mark.parametrize("like", [False, True], ids=["no store file", "beside a store"])
def test_a_link_at_the_temporary_name_is_not_followed(tmp_path: Path, like: bool) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "data"
    folder.mkdir()
    store = folder / "m.db"
    store.write_bytes(b"")
    _plant(folder, "list.jsonl", victim)
    update_lines(folder / "list.jsonl", lambda lines: [*lines, "one"], store if like else None)
    assert victim.read_text() == "precious\n"
    assert read_lines(folder / "list.jsonl") == ["one"]
    assert not (folder / f".list.jsonl.{os.getpid()}").exists()


def test_an_arangodb_export_ledger_ignores_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setattr(export_files, "default_data_dir", lambda: data)
    config = Config(backend="arangodb")
    ledger = export_files.ledger_path(config)
    _plant(data, ledger.name, victim)
    exported = tmp_path / "export.json"
    exported.write_text("{}")
    export_files.record_export(config, "acme", exported)
    assert victim.read_text() == "precious\n"
    assert [json.loads(line)["tenant"] for line in read_lines(ledger)] == ["acme"]
