"""The vector index's creation against python-arango's interfaces, without a server.

``IndexDB`` stands in for python-arango's ``StandardDatabase`` / ``StandardCollection`` only
as far as ``ensure_vector_index`` touches them: it records the index calls and plays back
what the docs say a server answers (docs-hugo site/content/arangodb/3.12/indexes-and-search/
indexing/working-with-indexes/vector-indexes.md). The counts the lifecycle decides on are
given directly, as in ``big_indexed_tenant`` of test_arango_store_unit.py; no AQL runs here.
"""

from __future__ import annotations

from typing import Any

import pytest
from arango.exceptions import IndexCreateError
from arango.request import Request
from arango.response import Response
from requests.exceptions import ReadTimeout

from attestor_arango.config import load_config
from attestor_arango.store.arango import connect
from attestor_arango.store.arango.schema import ensure_vector_index


class Counts:
    """What admin_vector_stats / admin_vector_shards would count on the server."""

    def __init__(self, docs: int, dimension: int = 8) -> None:
        self.docs, self.dimension = docs, dimension

    def run_admin(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if name == "admin_vector_stats":
            return [{"docs": self.docs, "dimensions": [self.dimension]}]
        assert name == "admin_vector_shards"
        return [{"shard": "memories", "n": self.docs}]


class IndexDB:
    """``add_index`` behaves as scripted: ``ok``, ``fail`` (IndexCreateError, the index left
    behind, as up to 3.12.9) or ``timeout`` (requests gives up before the server answers)."""

    def __init__(self, outcome: str, *, version: str, training_state: str | None = None) -> None:
        self.outcome, self._version, self.training_state = outcome, version, training_state
        self.indexes_held: list[dict[str, Any]] = []
        self.calls: list[tuple[str, Any]] = []
        self.listings = 0
        self.listing_times_out_after: int | None = None

    # StandardDatabase
    def role(self) -> str:
        return "SINGLE"

    def version(self) -> str:
        return self._version

    def collection(self, name: str) -> IndexDB:
        assert name == "memories"
        return self

    # StandardCollection
    def indexes(self) -> list[dict[str, Any]]:
        self.listings += 1
        if (
            self.listing_times_out_after is not None
            and self.listings > self.listing_times_out_after
        ):
            raise ReadTimeout("HTTPConnectionPool(host='db', port=8529): Read timed out.")
        return [dict(ix) for ix in self.indexes_held]

    def add_index(self, data: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("add_index", data))
        if self.outcome == "timeout":
            raise ReadTimeout("HTTPConnectionPool(host='db', port=8529): Read timed out.")
        held = {"id": "77", "name": data["name"], "type": "vector", "fields": data["fields"]}
        held["params"] = dict(data["params"])
        if self.training_state is not None:
            held["training_state"] = self.training_state
        self.indexes_held.append(held)
        if self.outcome == "fail":
            resp = Response("post", "http://db:8529/_api/index", {}, 400, "Bad", "")
            resp.error_code = 4  # ERROR_BAD_PARAMETER
            resp.error_message = "not enough training data for vector index"
            raise IndexCreateError(resp, Request("post", "/_api/index"))
        return held

    def delete_index(self, index_id: str, ignore_missing: bool = False) -> bool:
        self.calls.append(("delete_index", index_id))
        self.indexes_held = [ix for ix in self.indexes_held if ix["id"] != index_id]
        return True


def test_a_failed_training_on_a_server_without_training_state_drops_the_leftover() -> None:
    """Up to 3.12.9 a failed training leaves an unusable index; before 3.12.9 nothing says
    so (no trainingState), and the store would take it for a ready one."""
    db = IndexDB("fail", version="3.12.7-2")
    report = ensure_vector_index(db, Counts(5000), min_docs=1)  # type: ignore[arg-type]
    assert report["status"] == "failed" and "training data" in report["reason"]
    assert ("delete_index", "77") in db.calls and db.indexes_held == []
    assert report["exists"] is False and report["dropped_untrained_index"] == "vec_memories_cosine"
    again = ensure_vector_index(db, Counts(5000), min_docs=1)  # type: ignore[arg-type]
    assert again["status"] == "failed"  # tried again, not "exists"


def test_a_server_that_reports_the_training_state_keeps_its_unusable_index() -> None:
    db = IndexDB("fail", version="3.12.9", training_state="unusable")
    report = ensure_vector_index(db, Counts(5000), min_docs=1)  # type: ignore[arg-type]
    assert report["status"] == "failed" and report["training_state"] == "unusable"
    assert [c for c, _ in db.calls] == ["add_index"]


def test_an_index_build_the_client_stops_waiting_for_is_reported_as_pending() -> None:
    db = IndexDB("timeout", version="3.12.7-2")
    report = ensure_vector_index(db, Counts(50_000), min_docs=1)  # type: ignore[arg-type]
    assert report["status"] == "pending" and "still be building" in report["reason"]
    assert [c for c, _ in db.calls] == ["add_index"]
    db = IndexDB("timeout", version="3.12.7-2")
    db.listing_times_out_after = 1  # the index listing after the timeout times out as well
    report = ensure_vector_index(db, Counts(50_000), min_docs=1)  # type: ignore[arg-type]
    assert report["status"] == "pending" and report["exists"] is None


def test_index_maintenance_waits_for_the_training_and_store_calls_do_not() -> None:
    settings = load_config(env={}, backend="arangodb", arango={"url": "http://127.0.0.1:1"}).arango
    for kwargs, expected in (({}, 60.0), ({"request_timeout": 3600.0}, 3600.0)):
        client = connect.make_client(settings, **kwargs)
        try:
            assert client._http.request_timeout == expected  # type: ignore[attr-defined]
        finally:
            client.close()
    assert connect.INDEX_BUILD_TIMEOUT_S >= 600 and connect.REQUEST_TIMEOUT_S == 60.0


@pytest.mark.parametrize(
    "entry", ["init_arango", "ensure_vector_index_for", "rebuild_vector_index"]
)
def test_init_and_the_vector_index_command_use_the_long_timeout(
    entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[float | None] = []

    class Stop(Exception):
        pass

    def recording_make_client(settings: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("request_timeout"))
        raise Stop

    monkeypatch.setattr(connect, "make_client", recording_make_client)
    config = load_config(env={}, backend="arangodb", arango={"url": "http://127.0.0.1:1"})
    with pytest.raises(Stop):
        getattr(connect, entry)(config)
    assert seen == [connect.INDEX_BUILD_TIMEOUT_S]


@pytest.mark.parametrize("version, state", [("3.12.7-2", None), ("3.12.9", "training")])
def test_the_index_is_built_in_the_background_and_says_how_queries_are_answered(
    version: str, state: str | None
) -> None:
    """inBackground true: no exclusive lock, writes go on during the training (docs-hugo
    3.12 indexing/basics.md). From 3.12.9 the call may answer while the index still trains;
    the report then says vector queries use the exact scan until it is ready."""
    db = IndexDB("ok", version=version, training_state=state)
    db.indexes_held.append({"id": "5", "name": "vec_memories_cosine", "type": "vector"})
    report = ensure_vector_index(db, Counts(5000), min_docs=1, rebuild=True)  # type: ignore[arg-type]
    assert [c for c, _ in db.calls] == ["delete_index", "add_index"]
    body = db.calls[1][1]
    assert body["inBackground"] is True
    assert report["status"] == "rebuilt"
    if state is None:  # before 3.12.9 the call answers once the index is built
        assert "note" not in report
    else:
        assert report["training_state"] == "training" and "exact scan" in report["note"]
