"""``doctor`` warns of audit entries holding digests written before salts.

Rows written before schema 8 (no salt) left plain SHA-256 digests of their texts in audit
entries the chain cannot shed: after an erasure, an exact guess of an erased text can
still be confirmed against them. The purge counted them (``legacy_digest_entries``) only
once it ran; ``doctor`` now reports the same count for the CLI's tenant beforehand, as a
warning (the doctor stays ok), through the purge's own counter
(``governance.audit_chain.chain_exposure``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.config import Config
from attestor_arango.core import writes
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.cli.doctor import run_doctor
from attestor_arango.memory import AgentMemory

SUBJECT = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="subject")


def _check(config: Config) -> dict[str, object]:
    report = run_doctor(config, embedder=HashingEmbedder(64)).to_dict()
    assert report["ok"] is True, report  # a warning never fails the doctor
    [check] = [c for c in report["checks"] if c["name"] == "audit.legacy_digests"]
    return check


def test_doctor_counts_the_pre_salt_digests_of_the_cli_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(path=str(tmp_path / "mem.db"))
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64))
    with monkeypatch.context() as p:  # rows written the way a store before schema 8 did
        p.setattr(writes, "new_salt", lambda ids: None)
        old = mem.add("Alice Marsh has condition-7", context=SUBJECT)
        mem.forget(old.id, reason="the subject asked", context=SUBJECT)
    mem.add("Alice Marsh likes coffee", context=SUBJECT)  # salted: no plain digest
    mem.close()

    monkeypatch.setenv("ATTESTOR_TENANT", "subject")
    check = _check(config)
    assert check["ok"] is False and check["warning"] is True
    assert "tenant subject: 2 audit entries" in str(check["detail"])
    assert "erasure" in str(check["fix"])
    monkeypatch.setenv("ATTESTOR_TENANT", "someone-else")  # a tenant of salted rows only
    quiet = _check(config)
    assert quiet["ok"] is True and "no pre-salt digests" in str(quiet["detail"])


@pytest.mark.parametrize("value", ["", "   ", "two words"])
def test_an_empty_cli_tenant_is_reported_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """``ATTESTOR_TENANT=`` (a tenant variable that came out blank) makes the memory commands
    refuse; doctor reported the refusal under this check with the chain's fix text, which
    says nothing of what to do. Its fix now says: unset it, or give the tenant (a blank or
    malformed one too)."""
    config = Config(path=str(tmp_path / "mem.db"))
    AgentMemory(config=config, embedder=HashingEmbedder(64)).close()
    monkeypatch.setenv("ATTESTOR_TENANT", value)
    check = _check(config)
    assert check["ok"] is False and check["warning"] is True
    refusal = "ATTESTOR_TENANT is set but empty" if not value else f"malformed tenant {value!r}"
    assert refusal in str(check["detail"]), check
    fix = str(check["fix"])
    assert "unset ATTESTOR_TENANT" in fix and "tenant name" in fix, fix
    assert "erasure" not in fix and "chain" not in fix, fix


@pytest.mark.parametrize(
    ("name", "value"),
    [("ATTESTOR_ROLE", ""), ("ATTESTOR_NAMESPACE", ""), ("ATTESTOR_TOKEN_BUDGET", "many")],
)
def test_another_refused_identity_variable_is_named_in_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    config = Config(path=str(tmp_path / "mem.db"))
    AgentMemory(config=config, embedder=HashingEmbedder(64)).close()
    monkeypatch.setenv(name, value)
    check = _check(config)
    assert check["ok"] is False and check["warning"] is True
    assert name in str(check["detail"]) and name in str(check["fix"]), check
    assert "erasure" not in str(check["fix"])
