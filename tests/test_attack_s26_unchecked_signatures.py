"""A chain verified where signing is off says how many signatures it did not check.

Verification checks entry signatures with the service's key, which it has only when
signing is on where it runs. ``attestor-arango audit --verify`` run without
``ATTESTOR_SIGNING`` on a signed store answered ``ok`` with nothing else, also when an
entry's signature had been replaced by another entry's (``bad_signature`` with the key):
a reader could not tell "signatures checked and good" from "signatures not checked". The
report now counts the signed entries it did not check (``unchecked_signatures``), and the
CLI and the board say so."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

from interface_support import PYTHON, cli_env

from attestor_arango.context import AgentContext
from attestor_arango.core.signing import Signer
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="local", namespace="inbox")


def _signed_store(path: Path) -> None:
    mem = AgentMemory(path, embedder=HashingEmbedder(64))
    mem.signer = Signer.generate()
    for text in ("Ann lives in Oslo", "Ann likes tea", "Ann has a cat"):
        mem.add(text, context=A)
    assert mem.verify_audit_chain(context=A).ok
    mem.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
    conn.execute(
        "UPDATE audit SET signature = (SELECT signature FROM audit WHERE seq = 1) WHERE seq = 3"
    )
    conn.commit()
    conn.close()


def test_the_report_counts_the_signatures_it_could_not_check(tmp_path: Path) -> None:
    _signed_store(tmp_path / "memory.db")
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    assert mem.signer is None  # signing is off here
    report = mem.verify_audit_chain(context=A)
    mem.close()
    assert report.ok  # nothing it could check is broken
    assert report.unchecked_signatures == 3
    assert report.to_dict()["unchecked_signatures"] == 3


def test_a_verifier_with_the_key_checks_them_all(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64))
    mem.signer = Signer.generate()
    mem.add("Ann lives in Oslo", context=A)
    report = mem.verify_audit_chain(context=A)
    mem.close()
    assert report.ok and report.unchecked_signatures == 0


def test_the_cli_warns_that_the_signatures_were_not_checked(tmp_path: Path) -> None:
    _signed_store(tmp_path / "memory.db")
    run = [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "audit", "--verify"]
    env = cli_env(tmp_path)
    done = subprocess.run([*run, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["unchecked_signatures"] == 3
    assert "3 signed entries were not checked" in done.stderr
    assert "ATTESTOR_SIGNING" in done.stderr


def test_the_board_says_the_signatures_were_not_checked(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from attestor_arango.interfaces.api.app import create_app

    _signed_store(tmp_path / "memory.db")
    mem = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64), context=A)
    client = TestClient(create_app(mem, keys=None), base_url="http://127.0.0.1")
    page = client.get("/ui/audit/verify").text
    for _ in range(200):
        if 'data-testid="verify-done"' in page:
            break
        page = client.get("/ui/audit/verify").text
    mem.close()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Intact." in text and "3 signed entries were not checked" in text, text
