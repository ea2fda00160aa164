"""Adversarial finding: ``ATTESTOR_TENANT=`` (set, but empty) used the default tenant.

The CLI and the MCP stdio server take their tenant and namespace from ``ATTESTOR_TENANT`` /
``ATTESTOR_NAMESPACE``. A variable set to nothing was read as unset, so a deployment whose
``ATTESTOR_TENANT=$CUSTOMER`` came out blank wrote every customer's memories into the
shared default tenant ``local`` (and recalled them back to the others), and
``ATTESTOR_TENANT=$SUBJECT attestor-arango purge --yes`` erased ``local``. The flags were
already refused when blank (``--tenant ''``: "a scripted tenant that came out blank must
fail"). A blank tenant or namespace variable is now refused, naming it, unless a flag
gives the value; unset still means the default. So are a blank ``ATTESTOR_ROLE`` and
``ATTESTOR_READ_ONLY``, which fell back to the widest permissions (an orchestrator that
writes): an MCP stdio server configured for a read-only reviewer whose role variable came
out blank let its agent add and forget memories.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.cli.main import main


@pytest.mark.parametrize(
    "name", ["ATTESTOR_TENANT", "ATTESTOR_NAMESPACE", "ATTESTOR_ROLE", "ATTESTOR_READ_ONLY"]
)
def test_a_blank_scope_or_permission_variable_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "")
    with pytest.raises(ValidationError, match=name):
        AgentContext.from_env()


def test_a_flag_still_gives_the_value_and_unset_still_means_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ATTESTOR_TENANT", "")
    monkeypatch.setenv("ATTESTOR_NAMESPACE", "")
    ctx = AgentContext.from_env(tenant="acme", namespace="ops")
    assert (ctx.tenant, ctx.namespace) == ("acme", "ops")
    monkeypatch.delenv("ATTESTOR_TENANT")
    monkeypatch.delenv("ATTESTOR_NAMESPACE")
    assert (AgentContext.from_env().tenant, AgentContext.from_env().namespace) == (
        AgentContext().tenant,
        AgentContext().namespace,
    )


def _rows(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        tables = db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        names = sorted(r[0] for r in tables)
        return [f"{n}: {sorted(map(repr, db.execute(f'SELECT * FROM {n}')))}" for n in names]
    finally:
        db.close()


@pytest.mark.parametrize(
    "argv",
    [["purge", "--yes", "--reason", "GDPR erasure #1"], ["add", "a customer's secret"]],
)
def test_the_cli_with_a_blank_tenant_variable_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    db = tmp_path / "m.db"
    monkeypatch.setenv("ATTESTOR_PATH", str(db))
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    assert main(["add", "the default tenant keeps this", "--json"]) == 0
    before = _rows(db)
    capsys.readouterr()
    monkeypatch.setenv("ATTESTOR_TENANT", "")
    assert main([*argv, "--json"]) == 2
    assert "ATTESTOR_TENANT" in capsys.readouterr().err
    assert _rows(db) == before
