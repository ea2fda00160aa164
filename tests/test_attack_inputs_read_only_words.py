"""Adversarial finding: a read-only switch given a word we did not know fell open.

``X-Read-Only`` narrows what a request may do, yet any value but 1/true/yes/on read as
"no": ``X-Read-Only: enabled`` (or ``yep``, ``2``) wrote. ``$ATTESTOR_READ_ONLY`` knew even
fewer words (``on`` meant no). Both now read one set of words
(``validation.flag_from_text``: 1/0, true/false, yes/no, on/off, any case) and refuse any
other with a 422 (a ``ValidationError``) naming the switch; nothing is stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.config import identity_settings
from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app

ADD = {"content": "Ann likes gin"}


@pytest.mark.parametrize("word", ["enabled", "yep", "2", "tru", "read-only"])
def test_an_unknown_read_only_word_is_refused_and_nothing_stored(tmp_path: Path, word: str) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    before = stored(mem)
    answer = client.post("/v1/memories", json=ADD, headers={**AUTH, "X-Read-Only": word})
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"].startswith("x-read-only must be true or false")
    assert stored(mem) == before
    mem.close()


KNOWN = [("ON", False), ("1", False), (" true ", False), ("off", True), ("0", True), ("No", True)]


@pytest.mark.parametrize(("word", "writes"), KNOWN)
def test_known_read_only_words_are_read(tmp_path: Path, word: str, writes: bool) -> None:
    mem, _, _ = seeded(tmp_path)
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    answer = client.post("/v1/memories", json=ADD, headers={**AUTH, "X-Read-Only": word})
    assert answer.status_code == (200 if writes else 403), answer.text
    mem.close()


def test_the_read_only_variable_reads_the_same_words() -> None:
    assert identity_settings({"ATTESTOR_READ_ONLY": "on"})["read_only"] is True
    assert identity_settings({"ATTESTOR_READ_ONLY": "OFF"})["read_only"] is False
    with pytest.raises(ValidationError, match="ATTESTOR_READ_ONLY must be true or false"):
        identity_settings({"ATTESTOR_READ_ONLY": "enabled"})
