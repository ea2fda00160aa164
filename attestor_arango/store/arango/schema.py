"""Applies ``schemas/`` to a database, idempotently, and runs the vector-index lifecycle.

Everything physical is data in ``schemas/*.json``; this module only reconciles it:
create what is missing, leave what matches, and report (never silently replace) an index
whose stored definition drifted from the file. Running it twice changes nothing.

Vector index (see ``schemas/vector_index.json``): up to ArangoDB 3.12.8 training runs once,
at creation, over the documents already stored, and ``nLists`` may not exceed the number of
documents. So the index is created only once ``min_docs`` vectors exist, and ``rebuild``
drops and re-creates it after the data has drifted. Until then (and whenever the index is
not ``ready``) the store answers vector queries with the exact scan.
"""

from __future__ import annotations

import json
import math
import re
from importlib.resources.abc import Traversable
from typing import Any

from arango.database import StandardDatabase
from arango.exceptions import ArangoError

from attestor_arango.errors import StoreError
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.resources import data_dir

VECTOR_COLLECTION = "memories"
# What vector queries do while the index is (re)built. It is built with inBackground true
# (schemas/vector_index.json): no exclusive collection lock, so writes go on during the
# training. Before 3.12.9 such an index is hidden from the APIs and from queries until it is
# complete and the call answers only then (docs-hugo 3.12 indexing/basics.md, "Creating
# Indexes in Background"); from 3.12.9 the call may answer before the training ends and the
# index is listed with trainingState "training" / "ingesting" (vector-indexes.md; arangodb's
# own tests of background vector indexes). Either way no usable index serves the ANN query
# meanwhile: the store plans the exact scan for an index that is not ready, and an ANN query
# that meets the missing (1554) or untrained (1555) index falls back to it.
BUILDING_NOTE = (
    "until the index is ready (trainingState, 3.12.9+), vector queries are answered by the "
    "exact scan; writes are not blocked while it trains (inBackground)"
)


def load_schema(directory: Traversable | None = None) -> dict[str, Any]:
    """The three schema files as one dict: collections, sharding, views, vector.

    ``directory`` defaults to the installed (or checked-out) schemas/; raises
    ``StoreError`` when a file is missing or is not JSON.
    """
    directory = data_dir("schemas") if directory is None else directory
    try:
        collections = json.loads((directory / "collections.json").read_text(encoding="utf-8"))
        views = json.loads((directory / "views.json").read_text(encoding="utf-8"))
        vector = json.loads((directory / "vector_index.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreError(
            f"cannot read the ArangoDB schema files in {directory}: {exc}; they ship in the "
            "attestor-arango package (attestor_arango/schemas); reinstall it",
        ) from exc
    return {
        "collections": collections["collections"],
        "sharding": collections.get("sharding", {}),
        "views": views["views"],
        "vector": vector,
    }


def version_tuple(version: str) -> tuple[int, ...]:
    """'3.12.7.2' -> (3, 12, 7, 2); non-numeric suffixes ('-rc1') are ignored."""
    parts: list[int] = []
    for piece in version.split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        parts.append(int(match.group(0)))
        if match.end() != len(piece):
            break
    return tuple(parts)


def smallest_shard(counts: dict[str, int], shards: list[str]) -> tuple[str, int]:
    """The shard with the fewest stored vectors (a shard absent from ``counts`` has none).

    Every shard trains its own IVF cells on its own documents, so the smallest one bounds
    ``nLists`` (docs: "the number of documents in the shard for cluster deployments ... It
    cannot be bigger than the number of documents").
    """
    names = sorted(set(shards) | set(counts))
    if not names:
        raise StoreError("memories reports no shards; is the collection there?")
    return min(((name, int(counts.get(name, 0))) for name in names), key=lambda x: (x[1], x[0]))


def n_lists_for(docs: int, multiplier: float) -> int:
    """IVF cell count: about multiplier*sqrt(N), at least 1 and never above N."""
    if docs < 1:
        raise StoreError("a vector index needs at least one stored vector to train on")
    return max(1, min(docs, round(multiplier * math.sqrt(docs))))


def index_matches(existing: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return (
        existing.get("type") == wanted["type"]
        and list(existing.get("fields", [])) == list(wanted["fields"])
        and bool(existing.get("unique", False)) == bool(wanted.get("unique", False))
        and bool(existing.get("sparse", False)) == bool(wanted.get("sparse", False))
    )


def apply_schema(db: StandardDatabase, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Creates missing collections, indexes and views; returns what it did per object."""
    schema = schema or load_schema()
    report: dict[str, Any] = {"collections": {}, "indexes": {}, "views": {}, "drift": []}
    try:
        cluster = db.role() == "COORDINATOR"
        for spec in schema["collections"]:
            name = spec["name"]
            if not db.has_collection(name):
                sharding: dict[str, Any] = {}
                if cluster:  # shard by tenant: a tenant's rows stay together
                    sharding = {
                        "shard_fields": schema["sharding"].get("shard_fields", ["tenant"]),
                        "shard_count": schema["sharding"].get("shard_count", 3),
                    }
                db.create_collection(name, edge=spec["edge"], schema=spec["schema"], **sharding)
                report["collections"][name] = "created"
            else:
                db.collection(name).configure(schema=spec["schema"])
                report["collections"][name] = "exists"
            col = db.collection(name)
            existing = {ix.get("name"): ix for ix in col.indexes()}  # type: ignore[union-attr]
            for ix in spec["indexes"]:
                current = existing.get(ix["name"])
                if current is None:
                    col.add_index(dict(ix))
                    report["indexes"][ix["name"]] = "created"
                elif index_matches(current, ix):
                    report["indexes"][ix["name"]] = "exists"
                else:
                    report["indexes"][ix["name"]] = "drift"
                    report["drift"].append(
                        f"index {name}.{ix['name']} differs from schemas/collections.json; "
                        "drop it and re-run init to recreate it",
                    )
        view_names = {v["name"] for v in db.views()}  # type: ignore[union-attr]
        for view in schema["views"]:
            if view["name"] not in view_names:
                db.create_arangosearch_view(view["name"], properties=view["properties"])
                report["views"][view["name"]] = "created"
            else:
                db.update_arangosearch_view(view["name"], {"links": view["properties"]["links"]})
                report["views"][view["name"]] = "exists"
            missing = missing_view_links(db, view)
            if missing:
                raise StoreError(
                    f"view {view['name']} is missing links/fields {missing} after creation; "
                    "ArangoDB drops invalid links silently (e.g. an unknown analyzer), fix "
                    "schemas/views.json",
                )
    except (ArangoError, OSError) as exc:  # OSError: python-arango's connection failures
        raise StoreError(f"applying the ArangoDB schema failed: {exc}") from exc
    return report


def missing_view_links(db: StandardDatabase, view: dict[str, Any]) -> list[str]:
    """Links or linked fields the server does not have (a silently dropped link)."""
    props = db.view(view["name"])
    links = props.get("links") or {}  # type: ignore[union-attr]
    missing: list[str] = []
    for collection, link in view["properties"]["links"].items():
        have = links.get(collection)
        if have is None:
            missing.append(collection)
            continue
        fields = have.get("fields") or {}
        missing.extend(f"{collection}.{f}" for f in link.get("fields", {}) if f not in fields)
    return missing


def memories_shards(db: StandardDatabase) -> list[str]:
    """Shard ids of memories in a cluster; on a single server the collection itself."""
    if db.role() != "COORDINATOR":
        return [VECTOR_COLLECTION]
    shards = db.collection(VECTOR_COLLECTION).shards().get("shards") or {}  # type: ignore[union-attr]
    return sorted(shards)


def vector_index_state(db: StandardDatabase) -> dict[str, Any]:
    """The vector index of memories as the server reports it (``exists: False`` if none)."""
    for ix in db.collection(VECTOR_COLLECTION).indexes():  # type: ignore[union-attr]
        if ix.get("type") == "vector":
            params = ix.get("params") or {}
            return {
                "exists": True,
                "id": ix.get("id"),
                "name": ix.get("name"),
                "dimension": params.get("dimension"),
                "n_lists": params.get("nLists"),
                # absent before 3.12.9: an index that exists there was trained at creation
                "training_state": ix.get("training_state"),
                "error_message": ix.get("error_message"),
            }
    return {"exists": False}


def vector_index_definition(
    spec: dict[str, Any], *, shard_docs: int, dimension: int, server_version: str
) -> dict[str, Any]:
    """The index body to POST, with dimension, nLists and (3.12.7+) storedValues filled in.

    ``shard_docs`` is the smallest shard's vector count (the whole collection's on a single
    server): nLists is sized from it, so every shard has enough documents to train.
    """
    body = json.loads(json.dumps(spec["index"]))
    body["params"]["dimension"] = dimension
    body["params"]["nLists"] = n_lists_for(shard_docs, float(spec.get("nlists_multiplier", 4)))
    floor = version_tuple(spec.get("min_server_version_stored_values", "3.12.7"))
    if version_tuple(server_version) >= floor and spec.get("stored_values"):
        body["storedValues"] = list(spec["stored_values"])
    return body


def ensure_vector_index(
    db: StandardDatabase,
    executor: Executor,
    *,
    min_docs: int | None = None,
    rebuild: bool = False,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Creates (or with ``rebuild`` drops and re-creates) the vector index when it can train."""
    spec = (schema or load_schema())["vector"]
    threshold = int(spec.get("min_docs", 1000) if min_docs is None else min_docs)
    state = vector_index_state(db)
    if state["exists"] and not rebuild:
        return {"status": "exists", **state}
    stats = executor.run_admin("admin_vector_stats", {})[0]
    docs = int(stats.get("docs") or 0)
    dimensions = sorted(int(d) for d in stats.get("dimensions") or [])
    if docs < max(threshold, 1):
        return {
            "status": "deferred",
            "reason": f"{docs} stored vectors < {max(threshold, 1)} needed to train the index; "
            "exact cosine serves all tenants until then",
            **state,
        }
    if len(dimensions) != 1:
        return {
            "status": "refused",
            "reason": f"tenants use embedding dimensions {dimensions}; one vector index needs "
            "one dimension (re-embed tenants to one embedder, or keep the exact scan)",
            **state,
        }
    try:
        counts = {
            str(r["shard"]): int(r["n"]) for r in executor.run_admin("admin_vector_shards", {})
        }
        shard, shard_docs = smallest_shard(counts, memories_shards(db))
        if shard_docs < 1:
            return {
                "status": "deferred",
                "reason": f"shard {shard} of memories holds no vectors yet and every shard "
                "trains its own cells; exact cosine serves all tenants until each shard has some",
                **state,
            }
        version = str(db.version())
        body = vector_index_definition(
            spec, shard_docs=shard_docs, dimension=dimensions[0], server_version=version
        )
        col = db.collection(VECTOR_COLLECTION)
        if state["exists"]:
            col.delete_index(str(state["id"]), ignore_missing=True)
        col.add_index(body)
    except ArangoError as exc:
        return {"status": "failed", "reason": str(exc), **_drop_untrained(db)}
    except OSError as exc:  # requests' ReadTimeout: the server may well still be training
        return {
            "status": "pending",
            "reason": f"ArangoDB did not answer the index creation in time ({exc}); before "
            "3.12.9 the call only returns once the index is built, so the server may still "
            "be building it: run `attestor-arango doctor` or `vector-index` again later; "
            + BUILDING_NOTE,
            **_state_if_answered(db),
        }
    state = vector_index_state(db)
    report = {"status": "rebuilt" if rebuild else "created", **state}
    if state.get("training_state") not in (None, "ready"):
        report["note"] = BUILDING_NOTE
    return report


def _state_if_answered(db: StandardDatabase) -> dict[str, Any]:
    """The index state, or ``exists: None`` when the server does not answer that either."""
    try:
        return vector_index_state(db)
    except (ArangoError, OSError) as exc:
        return {"exists": None, "state_error": str(exc)}


def _drop_untrained(db: StandardDatabase) -> dict[str, Any]:
    """The index state after a failed creation; drops the index the failure left behind
    when the server cannot say it is untrained.

    docs-hugo 3.12 vector-indexes.md, inBackground: "Up to v3.12.9, the call returns an
    error if the training fails ... The index is created nevertheless but stays
    unusable", and only 3.12.9+ report ``trainingState``. Without that field the store
    and the doctor would take the leftover for a ready index (and ``init`` would answer
    "exists" instead of training again), so it is removed; a server that reports the
    state keeps it, its own training retries it once enough documents exist.
    """
    state = vector_index_state(db)
    if state["exists"] and state.get("training_state") is None:
        try:
            db.collection(VECTOR_COLLECTION).delete_index(str(state["id"]), ignore_missing=True)
        except ArangoError as exc:
            return {**state, "drop_failed": str(exc)}
        return {**vector_index_state(db), "dropped_untrained_index": state.get("name")}
    return state
