"""Session 25 attack: ``doctor`` and ``init`` printed the ArangoDB password in its URL.

``ARANGO_URL=http://root:pw@db:8529`` is a form the driver accepts. The doctor's report
(often pasted into an issue or a chat to ask for help) named the URL whole in its config
line and in the fix it suggests; ArangoDB's own doctor report carried it as ``url``. Each
now names the URL without its user part.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango.config import ArangoSettings, Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.cli.doctor import run_doctor
from attestor_arango.store.arango.doctor import arango_doctor

SECRET = "pwSECRET25"
URL = f"http://root:{SECRET}@127.0.0.1:9"  # a closed port: nothing answers


def _config(tmp_path: Path) -> Config:
    return Config(
        backend="arangodb",
        path=str(tmp_path / "m.db"),
        arango=ArangoSettings(url=URL),
    )


def test_the_doctor_report_names_the_arango_url_without_its_password(tmp_path: Path) -> None:
    report = json.dumps(run_doctor(_config(tmp_path), embedder=HashingEmbedder(64)).to_dict())

    assert SECRET not in report, report
    assert "http://***@127.0.0.1:9" in report


def test_the_arango_doctor_names_the_url_without_its_password(tmp_path: Path) -> None:
    report = json.dumps(arango_doctor(_config(tmp_path)), default=str)

    assert SECRET not in report, report
    assert "127.0.0.1:9" in report


def test_a_driver_error_naming_the_url_is_reported_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver's own exception (not a StoreError) may quote the URL it was given."""
    from attestor_arango.store.arango import doctor

    class Database:
        def version(self) -> str:
            raise ConnectionError(f"Max retries exceeded with url: {URL}/_api/version")

    class Client:
        def close(self) -> None:
            pass

    monkeypatch.setattr(doctor, "make_client", lambda settings: Client())
    monkeypatch.setattr(doctor, "_connect", lambda settings, client, create: (Database(), None))
    report = json.dumps(arango_doctor(_config(tmp_path)), default=str)

    assert "Max retries" in report
    assert SECRET not in report, report
