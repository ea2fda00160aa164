"""Session 22 attack battery: an import stored its episodes' metadata and texts and its
relations' properties unchecked.

``import_user`` held a memory's metadata to ``add``'s rule (``check_metadata``: at most a
MB of JSON, 32 levels, integers within 64 bits), but wrote an episode's ``metadata`` and a
relation's ``properties`` as they came, fields the live path only ever fills itself (a
speaker's name, the evidence episode). A 6 KB YAML import file whose episode metadata
named one list through aliases (``&a [x, ...]``, ``&b [*a, *a, ...]``, eight levels) made
the `import` command run 25 s, peak at 1.5 GB and leave a 423 MB store; a JSON export could
store any size, nesting, or an integer ArangoDB would not keep exactly. Both are now held
to ``check_metadata``; the row is named and nothing is imported. An episode's texts were
stored unchecked too: a NUL, or 2,000,000 characters where ``ingest_round`` takes 64,000 a
side (``ingest.model.MAX_TURN_CHARS``); they are now held to the turn's rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango import AgentContext
from attestor_arango.config import read_document
from attestor_arango.errors import ValidationError
from attestor_arango.ingest.model import MAX_TURN_CHARS
from attestor_arango.validation import MAX_METADATA_BYTES, MAX_METADATA_DEPTH

GAMMA = AgentContext(agent_id="orch", role="orchestrator", tenant="gamma", namespace="inbox")
Edit = Callable[[dict[str, Any]], None]


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def _episode(value: Any) -> Edit:
    return lambda d: d["episodes"][0].update(metadata={"k": value})


def _relation(value: Any) -> Edit:
    return lambda d: d["relations"][0].update(properties={"k": value})


EDITS: dict[str, Edit] = {
    "episode metadata over a MB": _episode("x" * (MAX_METADATA_BYTES + 1)),
    "episode metadata too deep": _episode(_deep(MAX_METADATA_DEPTH + 1)),
    "episode metadata beyond 64 bits": _episode(2**70),
    "relation properties over a MB": _relation("x" * (MAX_METADATA_BYTES + 1)),
    "relation properties too deep": _relation(_deep(MAX_METADATA_DEPTH + 1)),
    "relation properties beyond 64 bits": _relation(-(2**70)),
    "NUL in an episode's user text": lambda d: d["episodes"][0].update(user_text="a\x00b"),
    "episode user text over a turn's limit": (
        lambda d: d["episodes"][0].update(user_text="a" * (MAX_TURN_CHARS + 1))
    ),
    "episode assistant text over a turn's limit": (
        lambda d: d["episodes"][0].update(assistant_text="a" * (MAX_TURN_CHARS + 1))
    ),
}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mem, _, _ = seeded(tmp_path_factory.mktemp("source"))
    mem.ingest_round({"user": "I live in Paris."}, context=CTX)
    data: dict[str, Any] = json.loads(json.dumps(mem.export_user("acme", context=CTX)))
    mem.close()
    assert data["episodes"] and data["relations"]
    return data


@pytest.mark.parametrize("case", list(EDITS))
def test_an_import_with_unchecked_metadata_is_refused(
    tmp_path: Path, export: dict[str, Any], case: str
) -> None:
    data = json.loads(json.dumps(export))
    EDITS[case](data)
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="cannot be imported"):
        mem.import_user(data, context=GAMMA)
    assert stored(mem) == before
    mem.close()


def test_a_yaml_file_whose_aliases_expand_is_refused(
    tmp_path: Path, export: dict[str, Any]
) -> None:
    anchors = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        anchors.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    data = json.loads(json.dumps(export))
    data["episodes"][0]["metadata"] = {"k": "BOMB"}
    body = "\n".join(f"{k}: {json.dumps(v)}" for k, v in data.items()).replace('"BOMB"', "*h")
    file = tmp_path / "export.yaml"
    file.write_text("\n".join(anchors) + "\n" + body + "\n", encoding="utf-8")
    assert file.stat().st_size < 20_000  # 10**8 strings once the aliases are followed
    loaded = read_document(file, "file", "")
    for name in "abcdefgh":
        loaded.pop(name)
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="cannot be imported"):
        mem.import_user(loaded, context=GAMMA)
    assert stored(mem) == before
    mem.close()


def test_the_export_as_made_still_imports(tmp_path: Path, export: dict[str, Any]) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    counts = mem.import_user(json.loads(json.dumps(export)), context=GAMMA)
    assert counts["episodes"] == len(export["episodes"]) and counts["relations"] == 1
    mem.close()
