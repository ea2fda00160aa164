"""Helpers for the interface tests: a real uvicorn server on 127.0.0.1, keys, fingerprints."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from attestor_arango.clock import OPEN
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.interfaces.api.app import ApiSettings, create_app
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryFilter

ROOT = Path(__file__).resolve().parents[1]
ROLES = [r.value for r in AgentRole]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def role_key(role: str, tenant: str = "acme") -> tuple[str, ApiKey]:
    """A key for one role of one tenant; the plaintext is derived, only the hash is kept."""
    plain = f"key-{tenant}-{role}"
    return plain, ApiKey(
        id=f"{tenant}-{role}",
        sha256=hash_key(plain),
        tenant=tenant,
        roles=(AgentRole(role),),
        agent_ids=(f"{role}-1", f"{role}-2"),
    )


def keyring() -> tuple[KeyRing, dict[str, str]]:
    """Every role for tenant acme, an orchestrator for tenant beta; returns plaintexts by id."""
    keys, plain = [], {}
    for tenant, roles in (("acme", ROLES), ("beta", ["orchestrator", "reviewer"])):
        for role in roles:
            text, key = role_key(role, tenant)
            keys.append(key)
            plain[key.id] = text
    return KeyRing(keys), plain


@contextmanager
def running_server(
    memory: AgentMemory, keys: KeyRing | None, settings: ApiSettings | None = None
) -> Iterator[str]:
    """uvicorn serving ``memory`` in a thread on a free loopback port; yields the base URL."""
    app = create_app(memory, keys, settings)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def fingerprint(memory: AgentMemory, tenant: str = "acme") -> Any:
    """Everything a rejected request must leave alone, across all namespaces of the tenant
    (audit entries may grow: refusals are audited)."""
    view = TemporalView(as_of=OPEN - 1, include_closed=True)
    rows = memory.store.list_memories(Scope(tenant), MemoryFilter(), view, 100_000, 0)
    ctx = AgentContext(agent_id="inspector", role="orchestrator", tenant=tenant)
    stats = memory.stats(context=ctx)
    return (
        sorted((m.id, m.content_hash, m.status.value, str(m.t_expired)) for m in rows),
        stats.episodes,
        stats.entities,
        stats.relations,
    )


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI subprocess: this checkout importable, an isolated data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["ATTESTOR_PATH"] = str(home / "memory.db")
    env["ATTESTOR_EMBEDDER"] = "hashing"
    env["XDG_DATA_HOME"] = str(home / "xdg")
    env["COLUMNS"] = "200"  # rich tables: no wrapping inside the cells tests look at
    env.update(extra)
    return env


PYTHON = sys.executable


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``attestor-arango ARGS`` in a subprocess on ``home``'s store (``cli_env``), run from
    ``home`` so relative paths land there; its output as text."""
    return subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args],
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=home,
    )


def wait_healthy(base: str, proc: subprocess.Popen[Any], what: str = "server") -> None:
    """Waits (up to 60 s) until the server subprocess ``proc`` answers ``base``'s
    ``/healthz``; raises ``RuntimeError`` with its error output when it exits first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stderr or proc.stdout  # the output the server's errors go to
            err = out.read() if out else ""
            text = err.decode() if isinstance(err, bytes) else err
            raise RuntimeError(f"{what} exited: {text}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


@dataclass
class ServerRun:
    """A CLI server run by ``cli_server``: its base URL, and what it wrote (stdout and
    stderr as one text) once it has stopped."""

    base: str
    log: str = ""


@contextmanager
def cli_server(home: Path, *args: str, **env: str) -> Iterator[ServerRun]:
    """``attestor-arango ARGS --port <free port>`` (``api``, ``mcp --transport http``) in a
    subprocess on ``home``'s store (``cli_env`` with ``env``), healthy (``wait_healthy``);
    stopped on the way out, its output then in ``ServerRun.log``."""
    port = free_port()
    cmd = [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args, "--port", str(port)]
    proc = subprocess.Popen(
        cmd, env=cli_env(home, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    run = ServerRun(f"http://127.0.0.1:{port}")
    try:
        wait_healthy(run.base, proc)
        yield run
    finally:
        proc.terminate()
        run.log, _ = proc.communicate(timeout=60)
