"""`attestor-arango ui`: a local, single-user, read-only board on loopback only."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx

from tests.interface_support import PYTHON, cli_env, free_port

CLI = [PYTHON, "-m", "attestor_arango"]


def test_ui_serves_the_board_on_loopback_without_a_key(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    added = subprocess.run(
        [*CLI, "add", "The board shows <this> as text", "--entity", "Board"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert added.returncode == 0, added.stderr
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, "ui", "--no-browser", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/ui/memories"
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "the board did not start"
                time.sleep(0.2)
        assert page.status_code == 200
        assert "The board shows &lt;this&gt; as text" in page.text
        assert httpx.post(url, timeout=5).status_code == 405
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/ui/memories" in out


def test_ui_refuses_a_non_loopback_address(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "ui", "--no-browser", "--host", "0.0.0.0"],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "loopback" in done.stderr
