"""Session 28 attack: the post-tool-use hook kept secrets whose names it did not know.

The note a hook keeps of a command is recalled into every later session and read by every
agent of the tenant (README, Connect agents), so the scrubber hides the values of names
that look like a secret's. It knew only names containing "token", "passw", "secret",
"apikey" or "credential": ``STRIPE_KEY=...``, ``DB_PASS=...``, ``DB_PWD=...``,
``SSH_PRIVATE_KEY=...``, ``GITHUB_PAT=...``, ``AUTH=...``, ``--key ...``, ``--pass ...``
and ``--auth-header ...`` were stored verbatim. A name is now read as its words (split at
``_``, ``-``, ``.`` and lower-to-upper case changes): a word such as ``key``, ``pass``,
``pwd``, ``auth``, ``private`` or ``pat`` marks it too, while a name holding one only
inside a longer word (``--keyword``, ``PASSAGE_DIR``, ``--author``) does not. A setting
given as a bare word before its value (``poetry config pypi-token.pypi <token>``, ``yarn
config set npmAuthToken <token>``) kept the value too: a bare word holding "token",
"secret", "passw", "apikey" or "credential" that is not a file's path now hides the word
after it (both words after poetry's ``http-basic.<repo>``: a user, then a password).
"""

from __future__ import annotations

import pytest

from attestor_arango.interfaces.cli.hooks import scrub_command

SECRET = "s3cr3tVALUE28"
LEAKED = {
    "a key by its service": f"make deploy STRIPE_KEY={SECRET}",
    "a short password name": f"make migrate DB_PASS={SECRET}",
    "a pwd name": f"make migrate DB_PWD={SECRET}",
    "a private key": f"docker build --build-arg SSH_PRIVATE_KEY={SECRET} .",
    "a private key in quotes": f'terraform apply -var "private_key={SECRET}"',
    "a personal access token": f"make release GITHUB_PAT={SECRET}",
    "an auth value": f"make sync AUTH=user:{SECRET}",
    "a key flag": f"npm run deploy -- --key {SECRET}",
    "a pass flag": f"npm run seed -- --pass {SECRET}",
    "an auth header flag": f"npm run call -- --auth-header {SECRET}",
    "a camel-case key flag": f"npm run deploy -- --accessKey={SECRET}",
    "a poetry token setting": f"poetry config pypi-token.pypi {SECRET}",
    "a yarn token setting": f"yarn config set npmAuthToken {SECRET}",
    "an npm registry token setting": f"npm config set //registry.npmjs.org/:_authToken {SECRET}",
    "a poetry basic-auth setting": f"poetry config http-basic.private alice {SECRET}",
}
KEPT = {
    "a keyword flag": "pytest -q --keyword slow tests/",
    "a passage directory": "make index PASSAGE_DIR=data/passages",
    "an author flag": "git commit --author alice -m fix",
    "pytest's -k": "pytest -q -k key_rotation tests/",
    "test files named for tokens": "pytest -q tests/test_token.py tests/test_auth.py",
}


@pytest.mark.parametrize("name", list(LEAKED))
def test_a_secret_named_by_a_word_of_its_name_is_hidden(name: str) -> None:
    scrubbed = scrub_command(LEAKED[name])

    assert SECRET[:6] not in scrubbed and SECRET[-6:] not in scrubbed, (name, scrubbed)
    assert "***" in scrubbed


@pytest.mark.parametrize("name", list(KEPT))
def test_a_name_holding_such_a_word_only_inside_a_longer_one_is_kept(name: str) -> None:
    assert scrub_command(KEPT[name]) == KEPT[name]
