"""API keys -> AgentContext: loading, hashing, and headers that may only narrow a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from attestor_arango.context import AgentRole
from attestor_arango.errors import (
    AccessDenied,
    NotFoundError,
    QuotaExceededError,
    StoreError,
    ValidationError,
)
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key, load_keys, new_key
from attestor_arango.interfaces.api.errors import AuthenticationError, error_from_payload


def key(**over: object) -> ApiKey:
    values: dict[str, object] = {
        "id": "k",
        "sha256": hash_key("secret"),
        "tenant": "acme",
        "roles": ("executor", "reviewer"),
        "agent_ids": ("bot-1", "bot-2"),
    }
    values.update(over)
    return ApiKey.model_validate(values)


def test_keys_are_random_and_only_hashes_are_compared() -> None:
    a, b = new_key(), new_key()
    assert a != b and a.startswith("atk_") and len(a) > 40
    ring = KeyRing([key()])
    assert ring.authenticate("secret").id == "k"
    with pytest.raises(AuthenticationError):
        ring.authenticate("Secret")
    with pytest.raises(AuthenticationError):
        ring.authenticate(None)
    with pytest.raises(ValidationError, match="repeats"):
        KeyRing([key(), key(id="other")])


def test_defaults_come_from_the_key() -> None:
    ctx = KeyRing([key()]).context(key(), {})
    assert (ctx.tenant, ctx.role, ctx.agent_id, ctx.namespace) == (
        "acme",
        AgentRole.EXECUTOR,
        "bot-1",
        "inbox",
    )


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({spec.H_TENANT: "beta"}, AccessDenied),
        ({spec.H_ROLE: "orchestrator"}, AccessDenied),
        ({spec.H_ROLE: "wizard"}, ValidationError),
        ({spec.H_AGENT: "mallory"}, AccessDenied),
        ({spec.H_TRAIL: "bot-1,mallory"}, AccessDenied),
        ({spec.H_BUDGET: "lots"}, ValidationError),
        ({spec.H_BUDGET: "0"}, ValidationError),
        ({spec.H_NAMESPACE: "bad namespace!"}, ValidationError),
    ],
)
def test_headers_cannot_widen(headers: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        KeyRing([key()]).context(key(), headers)


def test_headers_can_narrow() -> None:
    k = key(token_budget=1000, namespaces=("inbox", "shared"))
    ring = KeyRing([k])
    ctx = ring.context(
        k,
        {
            spec.H_ROLE: "reviewer",
            spec.H_AGENT: "bot-2",
            spec.H_NAMESPACE: "shared",
            spec.H_BUDGET: "5000",  # above the key's cap: capped, not raised
            spec.H_READ_ONLY: "true",
        },
    )
    assert ctx.role == AgentRole.REVIEWER and ctx.agent_id == "bot-2"
    assert ctx.namespace == "shared" and ctx.token_budget == 1000 and ctx.read_only
    assert ring.context(k, {spec.H_BUDGET: "10"}).token_budget == 10
    with pytest.raises(AccessDenied):
        ring.context(k, {spec.H_NAMESPACE: "private"})


def test_a_read_only_key_stays_read_only() -> None:
    k = key(read_only=True)
    assert KeyRing([k]).context(k, {spec.H_READ_ONLY: "false"}).read_only


def test_write_counts_are_shared_per_key_and_agent_whatever_the_headers() -> None:
    plain = key()
    ring = KeyRing([plain])
    assert ring.context(plain, {}).usage is not ring.context(plain, {}).usage
    limited = key(id="l", sha256=hash_key("other"), max_writes_per_agent=3)
    ring = KeyRing([limited])
    usage = ring.context(limited, {}).usage
    for headers in ({spec.H_SESSION: "s-new"}, {spec.H_BUDGET: "7"}, {spec.H_TRAIL: "bot-1"}):
        assert ring.context(limited, headers).usage is usage
    assert ring.context(limited, {spec.H_AGENT: "bot-2"}).usage is not usage


def test_load_keys_from_file_env_json_and_env_path(tmp_path: Path) -> None:
    entry = key().model_dump(mode="json")
    file = tmp_path / "keys.yaml"
    file.write_text(yaml.safe_dump({"keys": [entry]}), encoding="utf-8")
    assert len(load_keys(file, env={})) == 1
    assert len(load_keys(None, env={"ATTESTOR_API_KEYS": json.dumps([entry])})) == 1
    assert len(load_keys(None, env={"ATTESTOR_API_KEYS": str(file)})) == 1
    assert len(load_keys(None, env={})) == 0
    with pytest.raises(ValidationError, match="does not exist"):
        load_keys(tmp_path / "missing.yaml", env={})
    with pytest.raises(ValidationError, match="not valid JSON"):
        load_keys(None, env={"ATTESTOR_API_KEYS": "[not json"})
    bad = dict(entry, sha256="plaintext-key")
    with pytest.raises(ValidationError, match="invalid API key entry"):
        load_keys(None, env={"ATTESTOR_API_KEYS": json.dumps([bad])})
    with pytest.raises(ValidationError):
        load_keys(None, env={"ATTESTOR_API_KEYS": json.dumps([dict(entry, roles=[])])})


def test_error_payloads_rebuild_typed_errors() -> None:
    err = error_from_payload(404, {"code": "not_found", "message": "gone", "details": {"x": 1}})
    assert isinstance(err, NotFoundError) and err.details == {"x": 1}
    assert isinstance(error_from_payload(429, {"code": "quota_exceeded"}), QuotaExceededError)
    assert isinstance(error_from_payload(401, {"code": "unauthenticated"}), AuthenticationError)
    assert isinstance(error_from_payload(403, "<html>proxy says no</html>"), AccessDenied)
    assert isinstance(error_from_payload(502, "bad gateway"), StoreError)
    odd = error_from_payload(400, {"code": "x", "message": "m", "details": {"message": "clash"}})
    assert odd.message == "m" and odd.details == {"message": "clash"}


def test_authorize_keeps_arguments_inside_the_key() -> None:
    from attestor_arango.interfaces.api.auth import authorize

    limited = key(namespaces=("inbox",))
    ctx = KeyRing([limited]).context(limited, {})
    routes = spec.ROUTES_BY_OP
    authorize(routes["list"], limited, ctx, {"namespace": "inbox"})
    authorize(routes["list"], limited, ctx, {})
    with pytest.raises(AccessDenied, match="namespace"):
        authorize(routes["list"], limited, ctx, {"namespace": "private"})
    for op in sorted(spec.TENANT_WIDE & set(routes)):
        with pytest.raises(AccessDenied, match="whole tenant"):
            authorize(routes[op], limited, ctx, {})
    free = key()
    ctx = KeyRing([free]).context(free, {})
    authorize(routes["export_user"], free, ctx, {"user": "acme"})
    authorize(routes["list"], free, ctx, {"namespace": "anything"})
    with pytest.raises(AccessDenied, match="tenant"):
        authorize(routes["export_user"], free, ctx, {"user": "beta"})
