"""Document <-> model mapping, planning rules and the schema data of the ArangoDB backend.

Pure functions and data files only: no server and no driver double is involved.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from attestor_arango.clock import OPEN, from_us
from attestor_arango.errors import ValidationError
from attestor_arango.models import Memory, Provenance, Relation, content_hash
from attestor_arango.scope import TemporalView
from attestor_arango.store.arango import docs, planning
from attestor_arango.store.arango.base import COLLECTIONS
from attestor_arango.store.arango.connect import MIN_SERVER_VERSION, PINNED_IMAGE
from attestor_arango.store.arango.executor import check_exact_numbers
from attestor_arango.store.arango.registry import Registry, strip_comments_and_strings
from attestor_arango.store.arango.schema import (
    load_schema,
    n_lists_for,
    vector_index_definition,
    version_tuple,
)
from attestor_arango.store.arango.store_graph import PURGE_STEPS

T0 = 1_767_225_600_000_000
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _memory() -> Memory:
    return Memory(
        id="m1",
        tenant="acme",
        namespace="ns1",
        content="Alice leads platform",
        entity="alice",
        tags=("a", "b"),
        valid_from=from_us(T0),
        valid_until=from_us(T0 + 10**9),
        t_created=from_us(T0 + 123_457),
        provenance=Provenance(agent_id="a1", role="planner", agent_trail=("a1",)),
        content_hash=content_hash("Alice leads platform"),
        metadata={"k": [1, 2]},
    )


# mapping ------------------------------------------------------------------------------------
def test_memory_document_never_carries_a_key_and_holds_the_vector() -> None:
    doc = docs.memory_to_arango(_memory(), np.array([0.5, 0.25], dtype=np.float32))
    assert not any(k.startswith("_") for k in doc)
    assert doc["vector"] == [0.5, 0.25] and all(type(x) is float for x in doc["vector"])
    assert doc["t_expired"] == OPEN and doc["t_created"] == T0 + 123_457
    assert "vector" not in docs.memory_to_arango(_memory(), None)


def test_server_attributes_and_query_extras_are_dropped_on_the_way_back() -> None:
    m = _memory()
    doc = docs.memory_to_arango(m, np.ones(3, dtype=np.float32))
    doc.update({"_key": "123", "_id": "memories/123", "_rev": "_x", "lane_score": 0.9})
    doc["t_expired"] = float(OPEN)  # a server may hand numbers back as doubles
    assert docs.memory_from_arango(doc) == m
    hit = docs.hit_from_arango(doc)
    assert hit.memory == m and hit.score == 0.9
    del doc["lane_score"]
    with pytest.raises(ValidationError):
        docs.hit_from_arango(doc)


def test_a_memory_document_carries_its_salt_and_the_schema_checks_it() -> None:
    """The salt keying a row's digests (``models.content_digest``) is a field of the
    document, read back with it; a document written before salts has none and reads as a
    row without one; the collection's schema takes a 32-byte hex salt or null, nothing else."""
    jsonschema = pytest.importorskip("jsonschema")
    salted = _memory().model_copy(update={"salt": "5a" * 32})
    doc = docs.memory_to_arango(salted, None)
    assert doc["salt"] == "5a" * 32 and docs.memory_from_arango(dict(doc)) == salted
    old = {k: v for k, v in doc.items() if k != "salt"}
    assert docs.memory_from_arango(old).salt is None
    rule = next(c for c in load_schema()["collections"] if c["name"] == "memories")
    check = jsonschema.Draft4Validator(rule["schema"]["rule"])
    for good in (doc, old, {**doc, "salt": None}):
        assert not list(check.iter_errors(good))
    for bad in ("5A" * 32, "5a" * 31, 7):
        assert list(check.iter_errors({**doc, "salt": bad})), bad


def test_relation_edge_body_leaves_from_and_to_to_the_query() -> None:
    r = Relation(
        id="r1", tenant="acme", namespace="ns1", source="alice", relation="knows",
        target="bob", t_created=from_us(T0),
    )  # fmt: skip
    body = docs.relation_to_arango(r)
    assert "_from" not in body and "_to" not in body and body["t_expired"] == OPEN
    back = dict(body, _from="graph_nodes/1", _to="graph_nodes/2", _key="9", _id="relations/9")
    assert docs.relation_from_arango(back) == r


@pytest.mark.parametrize(
    "bad", [np.ones((2, 2)), np.array([]), np.array([1.0, np.nan]), np.array([np.inf])]
)
def test_vectors_must_be_flat_and_finite(bad: np.ndarray) -> None:
    with pytest.raises(ValidationError):
        docs.vector_to_list(bad)


def test_time_values_are_exact_doubles() -> None:
    assert float(OPEN) == OPEN  # the sentinel survives a round trip through a double
    assert float(T0 + 123_457) == T0 + 123_457
    check_exact_numbers({"doc": {"t": OPEN, "v": [0.1, 0.2]}, "as_of": T0}, "q")
    with pytest.raises(ValidationError):
        check_exact_numbers({"doc": {"t": OPEN + 1}}, "q")
    with pytest.raises(ValidationError):
        check_exact_numbers([2**53 + 1], "q")
    check_exact_numbers({"doc": {"metadata": {"big": 2**60 + 1}, "t": T0}}, "q")


# planning -----------------------------------------------------------------------------------
def test_plan_vector_search_rules() -> None:
    ready = {"exists": True, "dimension": 8, "training_state": "ready"}

    def plan(**kw: object) -> str:
        args: dict[str, object] = {
            "index": ready, "dimension": 8, "tenant_vectors": 5000, "min_docs": 1000,
            "in_transaction": False,
        }  # fmt: skip
        args.update(kw)
        return planning.plan_vector_search(**args).path  # type: ignore[arg-type]

    assert plan() == "ann"
    assert plan(tenant_vectors=999) == "exact"
    assert plan(in_transaction=True) == "exact"
    assert plan(index={"exists": False}) == "exact"
    assert plan(index={**ready, "training_state": "unusable"}) == "exact"
    assert plan(index={**ready, "dimension": 4}) == "exact"
    assert plan(index={"exists": True, "dimension": 8}) == "ann"


def test_retry_and_fallback_rules() -> None:
    retry = planning.should_retry
    assert retry(1210, attempt=0, max_attempts=3, in_txn=False)
    assert retry(1200, attempt=1, max_attempts=3, in_txn=False)
    assert not retry(1210, attempt=2, max_attempts=3, in_txn=False)
    assert not retry(1210, attempt=0, max_attempts=3, in_txn=True)
    assert not retry(1554, attempt=0, max_attempts=3, in_txn=False)
    assert planning.ann_needs_fallback(1554) and not planning.ann_needs_fallback(1203)
    assert planning.ann_needs_fallback(1540)  # APPROX_NEAR_COSINE unknown: no --vector-index
    assert planning.ann_result_short(3, 5) and not planning.ann_result_short(5, 5)
    assert planning.probes_for(16, {"n_lists": 4}) == 4
    assert planning.probes_for(16, {"n_lists": 400}) == 16
    assert planning.probes_for(16, {"exists": True}) == 16 and planning.probes_for(0, {}) == 1


def test_view_binds_clamp_the_open_window_end_to_open() -> None:
    vb = planning.view_binds(TemporalView(as_of=T0))
    assert vb == {"as_of": T0, "t_expired_after": T0, "window_start": -1, "window_end": OPEN}
    closed = planning.view_binds(TemporalView(as_of=T0, include_closed=True, window=(1, 2)))
    assert closed == {"as_of": T0, "t_expired_after": -1, "window_start": 1, "window_end": 2}


# schema data ---------------------------------------------------------------------------------
SCHEMA = load_schema()


def test_schema_covers_every_collection_the_store_writes() -> None:
    names = [c["name"] for c in SCHEMA["collections"]]
    assert sorted(names) == sorted(COLLECTIONS)
    assert {c["name"] for c in SCHEMA["collections"] if c["edge"]} == {"relations"}
    assert set(PURGE_STEPS) - {"vectors"} <= set(COLLECTIONS)
    assert "audit" not in PURGE_STEPS and "audit_heads" not in PURGE_STEPS


def test_unique_indexes_contain_the_shard_key() -> None:
    """A cluster only accepts unique indexes that include every shard key (tenant)."""
    assert SCHEMA["sharding"]["shard_fields"] == ["tenant"]
    uniques = [ix for c in SCHEMA["collections"] for ix in c["indexes"] if ix.get("unique")]
    assert uniques and all(ix["fields"][0] == "tenant" for ix in uniques)
    names = [ix["name"] for c in SCHEMA["collections"] for ix in c["indexes"]]
    assert len(names) == len(set(names))


def test_every_search_field_is_linked_in_the_view() -> None:
    """An unlinked field in SEARCH silently matches nothing; check each one is linked."""
    links = SCHEMA["views"][0]["properties"]["links"]["memories"]["fields"]
    registry = Registry.load()
    for name in ("text_bm25", "text_bm25_wait"):
        code = strip_comments_and_strings(registry.get(name).text)
        search = code[code.index("SEARCH") : code.index("OPTIONS")]
        used = set(re.findall(r"\bm\.(\w+)", search))
        assert used and used <= set(links), used - set(links)
    assert links["content"]["analyzers"] == ["text_en"]


def test_vector_index_definition_by_server_version() -> None:
    spec = SCHEMA["vector"]
    old = vector_index_definition(spec, shard_docs=10_000, dimension=384, server_version="3.12.6")
    new = vector_index_definition(spec, shard_docs=10_000, dimension=384, server_version="3.12.7.2")
    assert "storedValues" not in old and new["storedValues"][0] == "tenant"
    assert new["params"] == {**old["params"]} and old["params"]["dimension"] == 384
    assert old["params"]["nLists"] == 400 and old["sparse"] is True
    assert old["params"]["metric"] == "cosine" and spec["index"]["params"]["dimension"] is None
    assert n_lists_for(3, 4) == 3 and n_lists_for(1, 4) == 1
    assert version_tuple("3.12.7.2") == (3, 12, 7, 2) and version_tuple("3.12.6-rc1") == (3, 12, 6)


def test_compose_file_pins_the_image_and_turns_the_vector_index_on() -> None:
    compose = yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    single = compose["services"]["arangodb"]
    assert single["image"] == PINNED_IMAGE
    assert "--vector-index=true" in single["command"]
    assert version_tuple(PINNED_IMAGE.split(":")[1]) >= MIN_SERVER_VERSION
    agents = 0
    for name, service in compose["services"].items():
        if "build" in service:  # attestor-arango's own image (Dockerfile), not an ArangoDB node
            continue
        assert service["image"] == PINNED_IMAGE, name
        command = [str(c) for c in service["command"]]
        has_option = any(c.startswith("--vector-index") for c in command)
        if "--agency.activate=true" in command:
            # arangod's option table (docs-hugo site/data/3.12/arangod.json, "vector-index"):
            # components coordinator/dbserver/single; "should not be enabled for Agents"
            agents += 1
            assert not has_option, name
        else:
            assert "--vector-index=true" in command, name
    assert agents == 3
    testing = Path(PROJECT_ROOT / "tests/support/arango_server.py").read_text("utf-8")
    assert "PINNED_IMAGE" in testing and "--vector-index=true" in testing


def test_nlists_is_sized_by_the_smallest_shard_not_the_collection() -> None:
    """Each shard trains its own IVF cells (docs: nLists cannot exceed a shard's documents)."""
    from attestor_arango.store.arango.schema import smallest_shard

    counts = {"s1": 90_000, "s2": 400}
    assert smallest_shard(counts, ["s1", "s2", "s3"]) == ("s3", 0)  # s3 holds no vectors
    shard, docs = smallest_shard(counts, ["s1", "s2"])
    assert (shard, docs) == ("s2", 400)
    spec = SCHEMA["vector"]
    body = vector_index_definition(spec, shard_docs=docs, dimension=384, server_version="3.12.7")
    assert body["params"]["nLists"] == n_lists_for(400, 4) == 80 <= 400
    # sized from the whole collection it would be round(4 * sqrt(90400)) = 1203 > 400
    assert n_lists_for(sum(counts.values()), 4) > docs
    assert smallest_shard({"memories": 7}, ["memories"]) == ("memories", 7)  # single server
