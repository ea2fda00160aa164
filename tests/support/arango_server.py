"""A live ArangoDB for the test suite and the benchmarks, or the exact reason there is none.

Order: ``ARANGO_URL`` (with ``ARANGO_USER`` / ``ARANGO_PASSWORD``) names a server to use;
otherwise, if a Docker engine answers and testcontainers is installed, one container of
the pinned image is started for the whole session with ``--vector-index=true``. Otherwise
callers skip with a reason that says which of these was missing. There is no fallback to
anything that imitates a server.

Every store handed out lives in its own fresh database (dropped afterwards), so tests do
not see each other's rows; the account therefore needs the right to create databases.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arango.client import ArangoClient

from attestor_arango.store.arango.connect import PINNED_IMAGE
from attestor_arango.store.arango.schema import apply_schema
from attestor_arango.store.arango.store import ArangoStore

SKIP_PREFIX = "ArangoDB contract tests skipped"
SERVER_ARGS = ["--vector-index=true", "--query.require-with=true"]


@dataclass
class LiveServer:
    url: str
    username: str
    password: str
    stop: Callable[[], None] | None = None


_state: dict[str, Any] = {}


def docker_unavailable_reason() -> str | None:
    """None when a Docker engine answers a ping, else why not (short)."""
    try:
        import docker

        docker.from_env(timeout=3).ping()
        return None
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:160]}"


def _local_docker() -> bool:
    """True when the Docker engine is on this machine (a unix socket or npipe)."""
    try:
        import docker

        base = str(docker.from_env(timeout=3).api.base_url)
    except Exception:
        return False
    return base.startswith(("http+docker://localhost", "http+docker://localnpipe"))


def resolve_server() -> LiveServer | str:
    """A server to test against, or the reason (one sentence) why there is none."""
    url = os.environ.get("ARANGO_URL")
    if url:
        return LiveServer(
            url, os.environ.get("ARANGO_USER", "root"), os.environ.get("ARANGO_PASSWORD", "")
        )
    why_no_docker = docker_unavailable_reason()
    if why_no_docker is not None:
        return f"ARANGO_URL is not set and no Docker engine answers ({why_no_docker})"
    try:
        try:
            from testcontainers.community.arangodb import ArangoDbContainer  # >= 4.15
        except ImportError:
            from testcontainers.arangodb import ArangoDbContainer  # <= 4.14
    except ImportError:
        return "ARANGO_URL is not set and testcontainers is not installed (pip install -e .[dev])"
    password = secrets.token_hex(12)
    container = ArangoDbContainer(PINNED_IMAGE, arango_root_password=password)
    container.with_command(SERVER_ARGS)
    if _local_docker():
        # publish on 127.0.0.1 only (random port); docker-py reads a 1-tuple as the host IP
        container.ports["8529"] = ("127.0.0.1",)  # type: ignore[assignment]
    try:
        container.start()
    except Exception as exc:
        return f"ARANGO_URL is not set and the {PINNED_IMAGE} container did not start ({exc})"
    return LiveServer(container.get_connection_url(), "root", password, container.stop)


def session_server(config: Any) -> LiveServer:
    """Resolved once per pytest session; skips (pytest.skip) with the reason when absent."""
    import pytest

    if "server" not in _state:
        resolved = resolve_server()
        _state["server"] = resolved
        if isinstance(resolved, LiveServer) and resolved.stop is not None:
            config.add_cleanup(resolved.stop)
    server = _state["server"]
    if isinstance(server, str):
        pytest.skip(f"{SKIP_PREFIX}: {server}")
    return server


def fresh_store(server: LiveServer, **store_options: Any) -> tuple[ArangoStore, Callable[[], None]]:
    """A store on a new, schema-initialised database, and the callable that drops it."""
    admin = ArangoClient(hosts=server.url)
    sys_db = admin.db("_system", server.username, server.password, verify=True)
    name = f"attestor_test_{secrets.token_hex(6)}"
    sys_db.create_database(name)
    client = ArangoClient(hosts=server.url)
    db = client.db(name, server.username, server.password, verify=True)
    apply_schema(db)
    store_options.setdefault("search_wait_for_sync", True)  # tests read their own writes
    store = ArangoStore(db, client=client, **store_options)

    def drop() -> None:
        try:
            sys_db.delete_database(name, ignore_missing=True)
        finally:
            admin.close()

    return store, drop
