"""Session 19 attack battery: counts nothing bounded.

One ingest round could add any number of graph entities: the rule extractor reads every
name of "I met Ann, Bob, ..." as an entity, so one 30,000-character turn upserted
thousands of entities under the store's write lock; a model's answer could name any
number of relations. A round naming more than ``MAX_ENTITIES_PER_ROUND`` distinct
entities or ``MAX_RELATIONS_PER_ROUND`` relations is now refused whole, naming the
limit, before anything (its episode included) is stored; consolidation skips such an
episode and says so. A retention run took any number of policies (each a pass over the tenant's
rows, over REST and MCP too): more than ``MAX_POLICIES`` is refused naming the limit.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.governance import retention
from attestor_arango.ingest import LLMExtractor, RuleResolver, pipeline
from attestor_arango.ingest.pipeline import Backends
from attestor_arango.interfaces.api.app import create_app
from tests.support.scripted_llm import ScriptedProvider


def _names(n: int) -> list[str]:
    """``n`` distinct capitalised made-up names."""
    letters = itertools.product("bcdfgklmnprstvz", "aeiou", "bcdfgklmnprstvz", "aeiou")
    return ["".join(p).capitalize() for p in itertools.islice(letters, n)]


def _met(n: int) -> str:
    return "I met " + ", ".join(_names(n)) + "."


def test_a_round_naming_too_many_entities_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match=f"limit of {pipeline.MAX_ENTITIES_PER_ROUND}"):
        mem.ingest_round({"user": _met(pipeline.MAX_ENTITIES_PER_ROUND + 1)}, context=CTX)
    assert stored(mem) == before
    result = mem.ingest_round({"user": _met(20)}, context=CTX)
    assert result.memories and mem.stats(context=CTX).entities >= 20
    mem.close()


def test_consolidation_skips_an_episode_naming_too_many_entities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    mem.ingest_round({"user": _met(5)}, context=CTX)
    before = stored(mem, with_audit=False)
    monkeypatch.setattr(pipeline, "MAX_ENTITIES_PER_ROUND", 2)
    report = mem.consolidate(context=CTX)
    assert any("entities" in w and "limit of 2" in w for w in report.warnings), report.warnings
    assert not report.memory_ids and stored(mem, with_audit=False) == before
    mem.close()


def _policies(n: int) -> list[dict[str, object]]:
    return [{"name": f"p{i}", "action": "delete", "older_than": "3650d"} for i in range(n)]


def test_too_many_retention_policies_are_refused_naming_the_limit(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem, with_audit=False)
    with pytest.raises(ValidationError, match=f"at most {retention.MAX_POLICIES}"):
        mem.apply_retention(_policies(retention.MAX_POLICIES + 1), context=CTX)
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    r = client.post(
        "/v1/governance/retention",
        json={"policies": _policies(retention.MAX_POLICIES + 1)},
        headers=AUTH,
    )
    assert r.status_code == 422 and str(retention.MAX_POLICIES) in r.json()["message"], r.text
    assert stored(mem, with_audit=False) == before
    assert mem.apply_retention(_policies(retention.MAX_POLICIES), context=CTX).ok
    mem.close()


def test_a_policy_with_too_many_tags_is_refused(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    policy = {
        "name": "p",
        "action": "archive",
        "older_than": "1d",
        "tags": [f"t{i}" for i in range(100)],
    }
    with pytest.raises(ValidationError, match="tags"):
        mem.apply_retention([policy], context=CTX)
    mem.close()


def test_a_model_answer_with_too_many_relations_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    """A model's answer (a prompt injected in the turn can steer it) named one fact with
    thousands of relations between two names: under the entity limit, each relation a row
    written under the store's lock. Such a round is refused naming the limit."""
    mem, _, _ = seeded(tmp_path / "m.db")
    n = pipeline.MAX_RELATIONS_PER_ROUND + 1
    relations = [{"source": "user", "relation": f"knows_{i}", "target": "Paris"} for i in range(n)]
    fact = {"text": "I live in Paris", "subject": "user", "entities": ["Paris"]}
    answer = {"facts": [{**fact, "relations": relations}]}
    provider = ScriptedProvider([json.dumps(answer), json.dumps({"facts": []})])
    mem.ingest_backends = Backends(LLMExtractor(provider), RuleResolver())
    before = stored(mem)
    with pytest.raises(ValidationError, match=f"limit of {pipeline.MAX_RELATIONS_PER_ROUND}"):
        mem.ingest_round({"user": "I live in Paris."}, context=CTX)
    assert stored(mem) == before
    mem.close()
