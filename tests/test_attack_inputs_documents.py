"""Adversarial finding: a YAML or JSON document that gives a key twice was read as its last.

PyYAML's ``safe_load`` keeps the last of two equal keys, so a retention policy
``action: archive`` followed by ``action: delete`` deleted, an import file whose row gave
``content`` twice imported the second, and a config file whose ``backend`` appeared twice
ran the one a reviewer may not have read. Every document we read (config, API keys,
retention policies, import files: ``config.load_yaml``; inline JSON keys in
``$ATTESTOR_API_KEYS``: ``jsontext.load_json``) now refuses a repeated key, naming it;
nothing is stored. YAML merge keys (``<<``) still let a mapping override
what it merges.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from interface_support import PYTHON, cli_env
from starlette.testclient import TestClient

from attestor_arango.config import API_KEYS_ENV, load_config
from attestor_arango.errors import ValidationError
from attestor_arango.governance.retention import load_policies
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.api.auth import load_keys

POLICY = "- name: tidy\n  action: archive\n  older_than: 1s\n  action: delete\n"


def test_a_retention_policy_that_gives_its_action_twice_is_refused(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem, with_audit=False)
    answer = client.post("/v1/governance/retention", json={"policies": POLICY}, headers=AUTH)
    assert answer.status_code == 422, answer.text
    assert "'action' is given twice" in answer.json()["message"]
    assert stored(mem, with_audit=False) == before
    mem.close()


def test_a_merge_key_still_lets_a_policy_override_what_it_merges() -> None:
    text = "base: &b {name: tidy, action: archive, older_than: 1d}\nretention:\n"
    text += "  - <<: *b\n    action: delete\n"
    (policy,) = load_policies(text)
    assert policy.action == "delete" and policy.name == "tidy"


def test_a_config_file_that_gives_a_key_twice_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "config.yaml"
    file.write_text("backend: embedded\npath: /tmp/a.db\nbackend: arangodb\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="'backend' is given twice"):
        load_config(file, env={})


def test_an_import_file_that_gives_a_key_twice_is_refused(tmp_path: Path) -> None:
    source, _, _ = seeded(tmp_path / "source")
    export = json.dumps(source.export_user("acme", context=CTX))
    source.close()
    assert export.count('"content": "Ann likes green tea"') == 1
    doubled = export.replace(
        '"content": "Ann likes green tea"',
        '"content": "Ann likes green tea", "content": "Ann likes poison"',
    )
    file = tmp_path / "export.json"
    file.write_text(doubled, encoding="utf-8")
    home = tmp_path / "target"
    home.mkdir()
    run = [PYTHON, "-m", "attestor_arango.interfaces.cli.main"]
    done = subprocess.run([*run, "import", str(file), "--json"], env=cli_env(home),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = json.loads(done.stderr)["error"]["message"]  # a JSON file is read as JSON
    assert "'content'" in message and "twice" in message
    listed = subprocess.run([*run, "list", "--json"], env=cli_env(home),
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


def test_inline_api_keys_that_give_a_key_twice_are_refused() -> None:
    sha = "0" * 64
    entry = f'{{"id": "k", "sha256": "{sha}", "tenant": "acme", "roles": ["orchestrator"], '
    entry += '"agent_ids": ["orch"]'
    with pytest.raises(ValidationError, match="'tenant' twice"):
        load_keys(env={API_KEYS_ENV: "[" + entry + ', "tenant": "beta"}]'})
    assert len(load_keys(env={API_KEYS_ENV: "[" + entry + "}]"})) == 1
