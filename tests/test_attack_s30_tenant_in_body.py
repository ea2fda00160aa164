"""Session 30 sweep: the tenant a governance call names in its body or query string.

Headers were swept before (``test_attack_tenants_identity``: a tenant header differing from
the key's in any way is refused). Export, quota and purge take the subject as ``user`` in
the body (or the query string): a name that differs from the key's tenant by case, a
space, a full-width or Cyrillic look-alike, an invisible character, a NUL, a list of two
or a wildcard must be refused, and nothing stored may change (the refusal is audited, so
the audit tables are left out of the comparison). Held before this session; kept as a
guard, since these routes act on a whole tenant.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.interfaces.api.app import create_app

# "acme" is the key's tenant (attack_support.acme_ring); each of these is another name
NAMES = ["beta", "ACME", "Acme", "acme ", " acme", "\uff41\uff43\uff4d\uff45", "acme\u200b",
         "\u0430cme", "acme\x00", "*", "acme,beta"]  # fmt: skip


@pytest.mark.parametrize("user", NAMES)
def test_a_governance_call_naming_another_spelling_of_the_tenant_is_refused(
    tmp_path: Path, user: str
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    before = stored(mem, with_audit=False)
    answers = {
        "export": client.post("/v1/governance/export", json={"user": user}, headers=AUTH),
        "quota": client.post(
            "/v1/governance/quota", json={"user": user, "daily_writes": 1}, headers=AUTH
        ),
        "quota_status": client.get("/v1/governance/quota", params={"user": user}, headers=AUTH),
        "purge": client.post(
            "/v1/governance/purge", json={"user": user, "reason": "erasure"}, headers=AUTH
        ),
    }
    assert {k: r.status_code for k, r in answers.items() if r.status_code not in (403, 422)} == {}
    assert not any("Bob" in r.text or "Ann likes" in r.text for r in answers.values())
    assert stored(mem, with_audit=False) == before
    mem.close()
