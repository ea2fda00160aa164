"""Session 22 attack battery: an import stored entity keys and relation ends in a form no
lookup matches.

Entities are matched by their key, ``validation.entity_key`` of the name (NFKC, lower
case, single spaces); the write path stores nothing else, relations name their ends by
that key, and schema migration 9 rewrote the keys stored before in that form. An import
stored an export's keys and relation ends as written: a hand-edited export (or one taken
before migration 9) with the key "ANN", "Ａｎｎ" or a decomposed "café" left an entity and
edges that no name ever reaches (a later fact about "Ann" made a second entity of the
same person), and an entity listed twice was counted twice in the import's answer and
its audit entry while stored once. An import now folds keys and relation ends as
migration 9 did, and counts the entities it stores.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded

from attestor_arango import AgentContext
from attestor_arango.governance.import_source import section_digests
from attestor_arango.validation import entity_key

GAMMA = AgentContext(agent_id="orch", role="orchestrator", tenant="gamma", namespace="inbox")
DECOMPOSED = unicodedata.normalize("NFD", "café")


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mem, _, _ = seeded(tmp_path_factory.mktemp("source"))
    mem.ingest_round({"user": "I live in Paris."}, context=CTX)
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=CTX)))
    mem.close()
    assert data["entities"] and data["relations"]
    return data


def _resealed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` edited, its head's section digests rewritten to match (as the editor of an
    unsigned export, or of one taken before migration 9 and exported again, can)."""
    data["chain"]["sections"] = section_digests(data)
    return data


def _keys(mem: Any, ctx: AgentContext) -> list[str]:
    return [e.key for e in mem.store.list_entities(mem.runtime.scope(ctx))]


@pytest.mark.parametrize("key", ["ANN", "Ａｎｎ", "ann  smith", DECOMPOSED])
def test_an_imported_key_is_stored_in_the_form_names_are_matched_by(
    tmp_path: Path, export: dict[str, Any], key: str
) -> None:
    data = json.loads(json.dumps(export))
    data["entities"][0].update(key=key, name=key)
    relation = data["relations"][0]
    relation.update(source=key, target=key.upper())
    mem, _, _ = seeded(tmp_path)
    mem.import_user(_resealed(data), context=GAMMA)
    keys = _keys(mem, GAMMA)
    assert entity_key(key) in keys and all(k == entity_key(k) for k in keys), keys
    (edge,) = mem.export_user("gamma", context=GAMMA)["relations"]
    assert (edge["source"], edge["target"]) == (entity_key(key), entity_key(key.upper()))
    mem.close()


def test_a_later_fact_about_the_imported_entity_makes_no_second_entity(
    tmp_path: Path, export: dict[str, Any]
) -> None:
    data = json.loads(json.dumps(export))
    data["entities"][0].update(key="ANN", name="Ann")
    mem, _, _ = seeded(tmp_path)
    mem.import_user(_resealed(data), context=GAMMA)
    before = _keys(mem, GAMMA)
    mem.ingest_round({"user": "Ann lives in Oslo."}, context=GAMMA)
    assert [k for k in _keys(mem, GAMMA) if entity_key(k) == "ann"] == ["ann"], before
    mem.close()


def test_an_entity_listed_twice_is_counted_once(tmp_path: Path, export: dict[str, Any]) -> None:
    data = json.loads(json.dumps(export))
    twin = dict(data["entities"][0])
    twin["key"] = twin["key"].upper()
    data["entities"].append(twin)
    mem, _, _ = seeded(tmp_path)
    counts = mem.import_user(_resealed(data), context=GAMMA)
    held = _keys(mem, GAMMA)
    assert counts["entities"] == len(held) == len(export["entities"]), (counts, held)
    (entry,) = [e for e in mem.audit_log(context=GAMMA) if e.action == "import"]
    assert entry.details["entities"] == len(held)
    mem.close()
