"""Session 25 attack: content made only of invisible characters was stored.

Whitespace-only content is refused ("content is empty"), but a zero-width space, a byte
order mark, a word joiner or a variation selector is not whitespace to ``str.strip``: a
memory of "\\u200b" was stored, shown as a blank line, counted against the tenant's quota
and never found by any query (it has no word). Such content is now refused as empty, over
REST as over the library, and nothing is stored; text that holds a visible character
beside them is kept as sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app

INVISIBLE = {
    "zero-width space": "\u200b",
    "byte order marks": "\ufeff\ufeff",
    "zero-width joiners between spaces": " \u200d \u200c \u2060 ",
    "soft hyphen": "\u00ad",
    "variation selectors": "\ufe0f\U000e0100",
    "Hangul filler": "\u3164",
}


@pytest.mark.parametrize("content", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_invisible_content_is_refused_as_empty(tmp_path: Path, content: str) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="content is empty"):
        mem.add(content, context=CTX)
    client = TestClient(create_app(mem, acme_ring()))
    r = client.post("/v1/memories", json={"content": content}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert "content is empty" in r.json()["message"]
    assert stored(mem) == before


def test_visible_text_beside_invisible_characters_is_kept(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    for content in ("tea\u200b", "\ufeffcoffee", "👍\ufe0f", "한\u3164글"):
        assert mem.add(content, context=CTX).content == content


@pytest.mark.parametrize(
    "field", [{"entity": "\u200b"}, {"category": "\ufeff\u2060"}, {"tags": ["ok", "\u200b"]}]
)
def test_invisible_names_and_tags_are_refused_as_blank(tmp_path: Path, field: dict) -> None:
    """A blank entity, category or tag is refused; one made of zero-width characters was
    stored: a name shown as nothing, that no one could type to find the fact again."""
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="non-empty string"):
        mem.add("Ann likes tea", context=CTX, **field)
    client = TestClient(create_app(mem, acme_ring()))
    r = client.post("/v1/memories", json={"content": "Ann likes tea", **field}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert stored(mem) == before
