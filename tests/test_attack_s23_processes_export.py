"""Session 23 attack battery: ``export --output`` running while another process purges the
tenant.

The export reads the tenant, then writes its file and records it in the ledger the purge
reads (``governance.export_files``). A purge (the CLI, another process) that ran between the
export's read and its write found no file to erase; the export then wrote the subject's
words to disk and the purge had reported success. Now the export, once its file is written
and recorded, checks whether a purge of the tenant began since it started reading, and
removes its file if so (an error says why): a purge either finds the recorded file or is
seen by the export.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError
from attestor_arango.interfaces.cli.commands import cmd_export
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n")


def _cli_purge(folder: Path, tenant: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.update(ATTESTOR_PATH=str(folder / "mem.db"), ATTESTOR_EMBEDDER="hashing")
    env.update(XDG_DATA_HOME=str(folder / "xdg"))
    cmd = [sys.executable, "-m", "attestor_arango.interfaces.cli.main", "purge"]
    cmd += ["--tenant", tenant, "--reason", "erasure request", "--yes", "--json"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


def _holding(folder: Path, word: str) -> list[str]:
    return [f.name for f in folder.rglob("*") if f.is_file() and word.encode() in f.read_bytes()]


@pytest.mark.parametrize("purge_during", [True, False])
def test_an_export_racing_its_tenants_purge_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, purge_during: bool
) -> None:
    mem = AgentMemory(
        config=Config(path=str(tmp_path / "mem.db")),
        embedder=HashingEmbedder(64),
        clock=ManualClock(),
        context=SUBJECT,
    )
    mem.add("Quillerbrand keeps the ledger", context=SUBJECT)
    read = mem.export_user

    def export_then_purge(user: str) -> dict[str, Any]:
        data = read(user)  # the export has read the rows ...
        if purge_during:  # ... when another process purges the tenant
            _cli_purge(tmp_path, "subject")
        return data

    monkeypatch.setattr(mem, "export_user", export_then_purge)
    target = tmp_path / "out" / "subject.json"
    target.parent.mkdir()
    args = argparse.Namespace(output=str(target), user="subject", keep=False)
    if purge_during:
        with pytest.raises(ConflictError, match="purged while"):
            cmd_export(args, mem)
        assert not target.exists()
        assert _holding(tmp_path, "Quillerbrand") == []
    else:  # no purge meanwhile: the file is written and recorded
        assert cmd_export(args, mem)[0]["written"] == str(target)
        assert _holding(tmp_path / "out", "Quillerbrand") == ["subject.json"]
        _cli_purge(tmp_path, "subject")  # and a later purge finds it
        assert not target.exists()
    mem.close()
