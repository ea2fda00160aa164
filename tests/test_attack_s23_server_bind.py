"""Adversarial finding: `api` / `mcp --transport http` left a bad --host or --port to uvicorn.

An unresolvable host, an address not of this machine or a port another process holds
opened the store, started the app, printed uvicorn's ``ERROR:`` line and exited 3, which
is this CLI's "not found" code; ``--host ""`` bound every interface (uvicorn printed
``http://:8080``). The CLI now tries the address before it opens anything: a host that
cannot be resolved or is not this machine's and an empty one are invalid input (exit 2),
a port in use is a conflict (exit 1), a port the user may not bind is denied (exit 4),
each one line saying what to pass, and no store is opened.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from attestor_arango.interfaces.cli import server
from attestor_arango.interfaces.cli.main import main


@pytest.fixture
def keys(tmp_path: Path) -> str:
    entry = {"id": "t-executor", "sha256": "0" * 64, "tenant": "t", "roles": ["executor"],
             "agent_ids": ["executor-1"]}  # fmt: skip
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"keys": [entry]}), encoding="utf-8")
    return str(path)


@pytest.fixture(autouse=True)
def no_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("uvicorn was started with an address the CLI should refuse")

    def no_store(_: Any) -> None:
        raise AssertionError("the store was opened for an address the CLI should refuse")

    monkeypatch.setattr(uvicorn, "run", refuse)
    monkeypatch.setattr(server, "open_memory", no_store)
    monkeypatch.setattr(server, "settle_heap", lambda: None)


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _argv(command: str, keys: str, tmp_path: Path, *extra: str) -> list[str]:
    head = ["api"] if command == "api" else ["mcp", "--transport", "http"]
    return [*head, "--keys", keys, "--path", str(tmp_path / "store"), "--json", *extra]


def _error(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and "ERROR:" not in err, err
    return dict(json.loads(err)["error"])


COMMANDS = ["api", "mcp"]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_empty_host_is_refused_with_what_to_pass(
    command: str, keys: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(command, keys, tmp_path, "--host", "")) == 2
    error = _error(capsys)
    assert error["code"] == "invalid_input"
    assert "0.0.0.0" in error["message"] and "127.0.0.1" in error["message"]
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unresolvable_host_is_invalid_input(
    command: str,
    keys: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def unknown(*_: Any, **__: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    assert main(_argv(command, keys, tmp_path, "--host", "nowhere.invalid")) == 2
    error = _error(capsys)
    assert error["code"] == "invalid_input"
    assert "nowhere.invalid" in error["message"] and "resolve" in error["message"]
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_an_address_of_another_machine_is_invalid_input(
    command: str, keys: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 203.0.113.0/24 is TEST-NET-3 (RFC 5737): never an address of this machine
    assert main(_argv(command, keys, tmp_path, "--host", "203.0.113.7")) == 2
    error = _error(capsys)
    assert error["code"] == "invalid_input"
    assert "203.0.113.7" in error["message"] and "this machine" in error["message"]
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_port_in_use_is_a_conflict_naming_it(
    command: str,
    keys: str,
    tmp_path: Path,
    busy_port: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _argv(command, keys, tmp_path, "--host", "127.0.0.1", "--port", str(busy_port))
    assert main(argv) == 1
    error = _error(capsys)
    assert error["code"] == "conflict"
    assert str(busy_port) in error["message"] and "--port" in error["message"]
    assert not (tmp_path / "store").exists()


def test_a_free_address_still_serves(
    keys: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(options))
    monkeypatch.setattr(server, "open_memory", lambda args: _Closable())
    import attestor_arango.interfaces.mcp_http as mcp_http

    monkeypatch.setattr(mcp_http, "create_mcp_app", lambda *a, **k: object())
    argv = ["mcp", "--transport", "http", "--keys", keys, "--host", "127.0.0.1", "--port", "0"]
    assert main(argv) == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 0


class _Closable:
    def close(self) -> None:
        pass


def test_a_server_that_does_not_start_is_a_typed_error_not_exit_3(
    keys: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def taken_meanwhile(*_: Any, **__: Any) -> None:  # uvicorn's own failure to start
        raise SystemExit(3)

    closed: list[bool] = []

    class Store(_Closable):
        def close(self) -> None:
            closed.append(True)

    monkeypatch.setattr(uvicorn, "run", taken_meanwhile)
    monkeypatch.setattr(server, "open_memory", lambda args: Store())
    import attestor_arango.interfaces.mcp_http as mcp_http

    monkeypatch.setattr(mcp_http, "create_mcp_app", lambda *a, **k: object())
    argv = ["mcp", "--transport", "http", "--keys", keys, "--port", "0", "--json"]
    assert main(argv) == 1
    assert "did not start" in _error(capsys)["message"]
    assert closed == [True]
