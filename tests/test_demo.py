"""The demo, in process and through the installed CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from attestor_arango.interfaces.cli.demo import run_demo


def test_demo_shows_supersession_refusal_replay_and_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    with open(os.devnull, "w") as sink:
        out = run_demo(tmp_path, console=Console(file=sink))
    assert out["reviewer_refused"] is True
    assert "Alice is the engineering manager" in out["as_of"]  # type: ignore[operator]
    assert "Alice is the CTO; Bob now runs engineering" not in out["as_of"]  # type: ignore[operator]
    assert out["timeline"] == ["superseded", "active"]
    assert out["recall"][0] == "Alice is the CTO; Bob now runs engineering"  # type: ignore[index]
    assert "supersede" in out["audit_actions"]  # type: ignore[operator]


def test_demo_cli_json(tmp_path: Path) -> None:
    env = {**os.environ, "ATTESTOR_EMBEDDER": "hashing"}
    proc = subprocess.run(
        [sys.executable, "-m", "attestor_arango", "demo", "--path", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout[proc.stdout.index("{\n") :])
    assert payload["reviewer_refused"] is True
