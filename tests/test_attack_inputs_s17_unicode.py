"""Adversarial names in other Unicode spellings: a composed and a decomposed "café", a
full-width "Ａｎｎ", a tag spelt two ways, are one entity / one tag, in a new store and in
one written before keys were normalised (schema migration 9)."""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded import schema as embedded_schema
from attestor_arango.validation import entity_key
from tests.attack_support import CTX, seeded

COMPOSED = "Caf\u00e9 Noir"  # é as one code point
DECOMPOSED = "Cafe\u0301 Noir"  # e + combining acute accent


def _entities(mem: AgentMemory) -> list[tuple[str, str]]:
    scope = mem.runtime.scope(CTX)  # type: ignore[attr-defined]
    return sorted((e.key, e.name) for e in mem.store.list_entities(scope))


def test_composed_and_decomposed_names_are_one_entity(tmp_path: Path) -> None:
    assert COMPOSED != DECOMPOSED
    mem, _, _ = seeded(tmp_path / "m.db")
    a = mem.add("The cafe opens at nine", entity=COMPOSED, category="place", context=CTX)
    b = mem.add("The cafe closes at six", entity=DECOMPOSED, category="hours", context=CTX)
    assert a.entity == b.entity == COMPOSED  # names stored in NFC
    keys = [k for k, _ in _entities(mem) if k.startswith("caf")]
    assert keys == ["caf\u00e9 noir"]


def test_full_width_and_ligature_spellings_share_a_key() -> None:
    assert entity_key("\uff21\uff4e\uff4e") == entity_key("ann") == "ann"
    assert entity_key("\ufb01ona") == "fiona"
    assert entity_key(DECOMPOSED) == entity_key(COMPOSED)
    assert entity_key("Ann\u3000Lee") == "ann lee"  # ideographic space is a space


def test_tags_spelt_two_ways_are_one_tag(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    m = mem.add("menu", tags=["caf\u00e9", "cafe\u0301"], context=CTX)
    assert list(m.tags) == ["caf\u00e9"]


def test_keys_stored_before_normalisation_are_folded_on_migration(tmp_path: Path) -> None:
    """A file at schema 8 holding a decomposed key, a full-width key and two old keys that
    now fold to one: migration 9 rewrites them, merges the pair (first row kept), rewrites
    relation ends, and the store answers the normalised key."""
    path = tmp_path / "m.db"
    mem, _, _ = seeded(path)
    mem.close()
    conn = sqlite3.connect(path)
    old = unicodedata.normalize("NFD", "caf\u00e9 noir")
    rows = [
        ("acme", "inbox", old, "Cafe\u0301 Noir", None, "[]"),
        ("acme", "inbox", "caf\u00e9 noir", "Caf\u00e9 Noir", None, "[]"),
        ("acme", "inbox", "\uff41\uff4e\uff4e", "\uff21\uff4e\uff4e", None, "[]"),
    ]
    conn.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.execute(
        "INSERT INTO relations VALUES ('r1', 'acme', 'inbox', ?, 'likes', ?, NULL, 1, ?, '{}')",
        (old, "\uff41\uff4e\uff4e", 2**62),
    )
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()

    mem = AgentMemory(path)
    assert mem.store.schema_version == embedded_schema.LATEST  # type: ignore[attr-defined]
    ents = _entities(mem)
    assert ("caf\u00e9 noir", "Cafe\u0301 Noir") in ents  # the first row (by rowid) kept
    assert [k for k, _ in ents].count("caf\u00e9 noir") == 1
    assert [k for k, _ in ents].count("ann") == 1  # merged into the seeded "ann" row
    assert "\uff41\uff4e\uff4e" not in {k for k, _ in ents}
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT source, target FROM relations WHERE id = 'r1'").fetchone() == (
        "caf\u00e9 noir",
        "ann",
    )
    conn.close()
