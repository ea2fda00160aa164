"""Session 25 attack: the "read-only" local board served a writable API beside it.

``attestor-arango ui`` is documented as a local, single-user, read-only board (no key,
the configured identity). It served the whole REST service on the same port without a
key, acting as that identity (an orchestrator by default) with its full grant: any
program on the machine (every user's, loopback being shared) could add memories, forget
them or purge the tenant while the board was open. The identity the board serves as is
now read-only, so every write through that port is refused (403) and nothing changes;
the board and REST reads work as before.
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

import httpx

from tests.interface_support import PYTHON, cli_env, free_port

CLI = [PYTHON, "-m", "attestor_arango"]


def _rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id, content, t_expired FROM memories ORDER BY id").fetchall()
    finally:
        con.close()


def test_the_local_board_port_refuses_writes(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    added = subprocess.run(
        [*CLI, "add", "Ann likes green tea", "--entity", "Ann"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    before = _rows(tmp_path / "memory.db")
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, "ui", "--no-browser", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(f"{base}/ui/memories", timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "the board did not start"
                time.sleep(0.2)
        assert page.status_code == 200 and "Ann likes green tea" in page.text
        wrote = httpx.post(f"{base}/v1/memories", json={"content": "planted"}, timeout=30)
        purged = httpx.post(
            f"{base}/v1/governance/purge", json={"user": "local", "reason": "x"}, timeout=30
        )
        read = httpx.post(f"{base}/v1/recall", json={"query": "tea"}, timeout=30)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert wrote.status_code == 403, wrote.text
    assert purged.status_code == 403, purged.text
    assert read.status_code == 200, read.text
    assert "Ann likes green tea" in read.text
    assert _rows(tmp_path / "memory.db") == before
