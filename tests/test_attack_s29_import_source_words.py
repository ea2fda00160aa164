"""Session 29 attack: an edited export's ``exported_at`` left words in the chain for good.

An import records where it came from in its audit entry (``source``: the exporting tenant,
``exported_at``, the last audit hash), and the chain outlives a purge. ``exported_at`` was
any short text: an export edited to say ``"exported_at": "hiv_positive"`` was imported, and
after ``purge_user`` of the importing tenant reported ``ok`` the words were still in the
store's file. It must be a time now (what ``export_user`` writes): anything else is refused
before anything is stored, and a real export still imports and keeps its time.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

SOURCE = AgentContext(agent_id="orch", role="orchestrator", tenant="source", namespace="n1")
SUBJECT = AgentContext(agent_id="orch", role="orchestrator", tenant="subject", namespace="n1")


@pytest.fixture
def exported(tmp_path: Path) -> dict[str, Any]:
    mem = AgentMemory(tmp_path / "source.db", embedder=HashingEmbedder(64))
    mem.add("a plain fact to carry over", context=SOURCE)
    data = mem.export_user("source", context=SOURCE)
    mem.close()
    return data


def test_an_export_whose_time_is_a_word_is_refused_and_stores_nothing(
    tmp_path: Path, exported: dict[str, Any]
) -> None:
    word = "".join(("hiv", "_qz", "positive"))
    data = copy.deepcopy(exported)
    data["exported_at"] = word
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64))

    with pytest.raises(ValidationError, match="exported_at"):
        mem.import_user(data, context=SUBJECT)

    assert mem.list(context=SUBJECT) == [] and mem.audit_log(context=SUBJECT) == []
    mem.close()
    assert not any(word.encode() in f.read_bytes() for f in tmp_path.glob("mem.db*"))


def test_a_real_export_imports_and_keeps_its_time(tmp_path: Path, exported: dict[str, Any]) -> None:
    mem = AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64))

    assert mem.import_user(exported, context=SUBJECT)["memories"] == 1

    entry = [e for e in mem.audit_log(context=SUBJECT) if e.action == "import"][-1]
    assert entry.details["source"]["exported_at"] == exported["exported_at"]
    assert mem.purge_user("subject", "GDPR erasure request #29", context=SUBJECT).ok
    mem.close()
