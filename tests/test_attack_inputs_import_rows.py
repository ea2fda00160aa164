"""Adversarial finding: an import file's entities, relations and agent ids were stored as
they came.

``import_user`` held every memory to ``add``'s checks, but wrote the export's entities and
relations, and the agent ids, trail entries and session ids of its memories and episodes,
with no check but their type: a hand-edited export stored an entity named
"\\x1b[2JParis" (an escape sequence for every terminal showing the graph), a 10,000
character relation end, an agent id with a control character in a memory's provenance.
Now each is held to the rule its live path follows (``check_label`` for names and
relation fields, ``check_agent_text`` for agent and session ids); the first row that
fails is named in a ``ValidationError`` and nothing is imported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango import AgentContext
from attestor_arango.errors import ValidationError

GAMMA = AgentContext(agent_id="orch", role="orchestrator", tenant="gamma", namespace="inbox")
Edit = Callable[[dict[str, Any]], None]


def _entity(**fields: Any) -> Edit:
    return lambda d: d["entities"][0].update(fields)


def _relation(**fields: Any) -> Edit:
    return lambda d: d["relations"][0].update(fields)


def _provenance(**fields: Any) -> Edit:
    return lambda d: d["memories"][0]["provenance"].update(fields)


def _episode(**fields: Any) -> Edit:
    return lambda d: d["episodes"][0].update(fields)


EDITS: dict[str, tuple[Edit, str]] = {
    "escape in an entity name": (_entity(name="\x1b[2JParis"), "name holds the control"),
    "long entity name": (_entity(name="P" * 10_000), "name is longer than 256"),
    "NUL in an entity key": (_entity(key="pa\x00ris"), "key holds the control"),
    "bell in an alias": (_entity(aliases=["Paris\x07"]), "alias holds the control"),
    "escape in a kind": (_entity(kind="\x1b[31mperson"), "kind holds the control"),
    "escape in a relation": (_relation(relation="lives\x1bin"), "relation holds the control"),
    "long relation target": (_relation(target="t" * 10_000), "target is longer than 256"),
    "escape in a memory's agent": (
        _provenance(agent_id="x\x1by"),
        "agent_id holds the character U+001B",
    ),
    "escape in a trail entry": (
        _provenance(agent_trail=["orch", "b\x1bot"]),
        "agent_trail entry holds the character U+001B",
    ),
    "long session id": (_provenance(session_id="s" * 500), "session_id has 500 characters"),
    "escape in an episode's agent": (_episode(agent_id="a\x1bb"), "agent_id holds the character"),
    "NUL in an episode id": (_episode(id="ep\x00"), "id holds the character U+0000"),
}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mem, _, _ = seeded(tmp_path_factory.mktemp("source"))
    mem.ingest_round({"user": "I live in Paris."}, context=CTX)
    data = mem.export_user("acme", context=CTX)
    mem.close()
    assert data["entities"] and data["relations"] and data["episodes"]
    return data


@pytest.mark.parametrize("case", list(EDITS))
def test_an_import_with_a_bad_row_is_refused_naming_it(
    tmp_path: Path, export: dict[str, Any], case: str
) -> None:
    edit, said = EDITS[case]
    data = json.loads(json.dumps(export))
    edit(data)
    mem, _, _ = seeded(tmp_path)
    before = stored(mem)
    with pytest.raises(ValidationError, match="cannot be imported") as refused:
        mem.import_user(data, context=GAMMA)
    assert said in refused.value.message, refused.value.message
    assert stored(mem) == before
    mem.close()


def test_the_export_as_made_imports(tmp_path: Path, export: dict[str, Any]) -> None:
    mem, _, _ = seeded(tmp_path)
    counts = mem.import_user(json.loads(json.dumps(export)), context=GAMMA)
    assert counts["entities"] == len(export["entities"]) and counts["relations"] == 1
    mem.close()
