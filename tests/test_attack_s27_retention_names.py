"""Session 27 sweep finding: a retention policy's name took any text.

Every other name the service is given (entity, category, tag, namespace, agent id) refuses
a control character (an escape sequence a terminal obeys, a NUL) and a blank, but a
retention policy's name was only held to 1-128 characters: "\\x1b[2J..." or "   " ran, and the
report (what the CLI prints, what REST and Python return) echoed it. The name is now a label
(``check_label``); the refusal names the field and nothing is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app

NAMES = {
    "an escape sequence": "\x1b[2Jscratch",
    "a NUL": "scr\x00atch",
    "a bell": "scratch\x07",
    "blanks": "   ",
}


def _policy(name: str) -> list[dict[str, str]]:
    return [{"name": name, "older_than": "1d", "action": "archive"}]


@pytest.mark.parametrize("case", list(NAMES))
def test_a_policy_name_that_is_not_a_label_is_refused(tmp_path: Path, case: str) -> None:
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match="name"):
        mem.apply_retention(_policy(NAMES[case]), dry_run=False, context=CTX)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    body = {"policies": _policy(NAMES[case]), "dry_run": False}
    answer = client.post("/v1/governance/retention", json=body, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_input" and "name" in answer.json()["message"]
    assert stored(mem) == before
    mem.close()


def test_a_policy_name_that_is_a_label_still_runs(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    report = mem.apply_retention(_policy("scratch cleanup"), dry_run=False, context=CTX)
    assert [o.policy for o in report.outcomes] == ["scratch cleanup"]
    mem.close()
