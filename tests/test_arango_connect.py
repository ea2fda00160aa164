"""Connecting to an ArangoDB that is not there fails fast, typed, and says what to do.

Uses a closed port on 127.0.0.1 (nothing listens), so no server and no double is involved.
"""

from __future__ import annotations

import socket

import pytest

from attestor_arango.config import Config, load_config
from attestor_arango.errors import StoreError
from attestor_arango.store.arango import arango_doctor, init_arango, open_arango_store
from attestor_arango.store.factory import open_store


@pytest.fixture
def unreachable() -> Config:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return load_config(env={}, backend="arangodb", arango={"url": f"http://127.0.0.1:{port}"})


def test_open_store_through_the_factory_raises_a_store_error(unreachable: Config) -> None:
    with pytest.raises(StoreError, match="ARANGO_URL") as info:
        open_store(unreachable)
    assert "docker compose up" in str(info.value)
    with pytest.raises(StoreError):
        open_arango_store(unreachable)


def test_init_raises_and_doctor_reports_instead_of_raising(unreachable: Config) -> None:
    with pytest.raises(StoreError):
        init_arango(unreachable)
    report = arango_doctor(unreachable)
    assert report["ok"] is False and report["url"] == unreachable.arango.url
    [check] = report["checks"]
    assert check["name"] == "connect" and check["ok"] is False and "ARANGO_URL" in check["fix"]


def test_vector_index_command_refuses_the_embedded_backend(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from attestor_arango.interfaces.cli.main import main

    code = main(["vector-index", "--backend", "embedded", "--json"])
    assert code != 0 and "ArangoDB backend" in capsys.readouterr().err


def test_vector_index_command_reports_an_unreachable_server(
    unreachable: Config, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from attestor_arango.interfaces.cli.main import main

    monkeypatch.setenv("ARANGO_URL", unreachable.arango.url)
    monkeypatch.delenv("ATTESTOR_CONFIG", raising=False)
    code = main(["vector-index", "--backend", "arangodb", "--rebuild", "--json"])
    assert code != 0 and "store_error" in capsys.readouterr().err


def test_doctor_says_what_a_missing_vector_index_option_means() -> None:
    from attestor_arango.store.arango.doctor import vector_option_check

    off = vector_option_check(False)
    assert off["ok"] is False and off["warning"] is True
    assert "1540" in off["detail"] and "exact cosine scan" in off["detail"]
    assert "--vector-index=true" in str(off["fix"])
    unknown = vector_option_check("unknown (ArangoServerError)")
    assert not unknown["ok"] and "1540" in unknown["detail"]
    on = vector_option_check(True)
    assert on["ok"] and on["fix"] is None


@pytest.mark.parametrize("version", ["8.1.0", "8.2.3", "8.2.4", "8.3.1"])
def test_drivers_older_than_8_3_2_are_refused_with_the_reason(version: str) -> None:
    from attestor_arango.store.arango.connect import check_driver_version

    with pytest.raises(StoreError, match=r"python-arango>=8\.3\.2") as info:
        check_driver_version(version)
    assert version in str(info.value) and "trainingState" in str(info.value)


def test_the_installed_driver_and_newer_ones_pass() -> None:
    from importlib import metadata

    from attestor_arango.store.arango.connect import check_driver_version

    assert check_driver_version() == metadata.version("python-arango")
    assert check_driver_version("8.3.2") == "8.3.2" and check_driver_version("9.0.1")


def test_doctor_reports_an_old_driver_instead_of_raising(
    unreachable: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(
        metadata, "version", lambda name: "8.2.0" if name == "python-arango" else real(name)
    )
    with pytest.raises(StoreError, match=r"8\.2\.0"):
        open_arango_store(unreachable)
    report = arango_doctor(unreachable)
    [check] = report["checks"]
    assert check["name"] == "driver" and not check["ok"] and "8.3.2" in check["fix"]


def test_an_unreachable_server_is_reported_once_without_urllib3_retry_warnings(
    unreachable: Config, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.WARNING)
    with pytest.raises(StoreError, match="no server answered") as info:
        open_arango_store(unreachable)
    assert str(info.value).count("ARANGO_URL") == 1
    report = arango_doctor(unreachable)
    assert [r.name for r in caplog.records if r.name.startswith("urllib3")] == []
    [check] = report["checks"]
    assert not check["detail"].startswith("StoreError") and "no server answered" in check["detail"]


def test_client_retries_answers_not_failed_connections_and_tries_each_host_once() -> None:
    from attestor_arango.store.arango.connect import make_client

    settings = load_config(
        env={}, backend="arangodb", arango={"url": "http://127.0.0.1:1,http://127.0.0.1:2"}
    ).arango
    client = make_client(settings)
    try:
        retry = client._sessions[0].get_adapter("http://x").max_retries  # type: ignore[attr-defined]
        assert (retry.connect, retry.total) == (0, 2)
        assert 503 in retry.status_forcelist and "POST" not in retry.allowed_methods
        assert client._host_resolver.max_tries == 2  # type: ignore[attr-defined]
    finally:
        client.close()


@pytest.mark.parametrize(
    "entry", ["open_arango_store", "init_arango", "ensure_vector_index_for", "rebuild_vector_index"]
)
def test_a_server_lost_after_the_first_answer_is_a_store_error(
    entry: str, unreachable: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python-arango reports a lost server as an OSError (ConnectionAbortedError after the last
    host, arango/connection.py process_request); the entry points say so as a StoreError."""
    from attestor_arango.store.arango import connect

    class GoneDB:
        def version(self) -> str:
            raise ConnectionAbortedError("Can't connect to host(s) within limit (1)")

    monkeypatch.setattr(connect, "_connect", lambda settings, client, create: (GoneDB(), False))
    with pytest.raises(StoreError, match="no server answered"):
        getattr(connect, entry)(unreachable)


def test_doctor_warns_about_tenants_a_reembedding_left_after_its_switch() -> None:
    from attestor_arango.store.arango.doctor import reembed_check

    quiet = reembed_check({"docs": 10, "dimensions": [8], "moving": 0})
    assert quiet["ok"] and quiet["fix"] is None
    left = reembed_check({"docs": 10, "dimensions": [8], "moving": 2})
    assert not left["ok"] and left["warning"] and "2 tenant(s)" in left["detail"]
    assert "reembed" in left["fix"]
    assert reembed_check({"docs": 0, "dimensions": [], "moving": None})["ok"]  # [] from COLLECT
