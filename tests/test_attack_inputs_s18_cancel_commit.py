"""Adversarial finding: the REST timeout's cancel flag (``cancel.py``) was checked by
``add`` and the batch path only, so ``forget``, ``purge_user``, ``import_user``,
``set_quota``, ``compact``, ``consolidate``... still committed after the client had been
told 504; and a call that commits several times (consolidation: one commit per episode)
answered 504 ``cancelled`` ("nothing was stored") when the timeout came after its first
commit, with that commit stored. Now the check is the store's last step before every
outermost commit, and once a call began committing the flag no longer rises: the answer is
either the call's own result or 504 ``cancelled`` with nothing stored.

No sleeps: the store is held inside a commit (its commit listener, which the embedded store
calls right before COMMIT and right after it) until the request's timeout has fired, read
from the call's flag; only what was stored and what was answered are asserted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, OTHER, acme_ring, seeded, stored
from starlette.testclient import TestClient
from test_arango_store_unit import RecordingDB, make_store

from attestor_arango import cancel
from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import CallCancelled
from attestor_arango.ingest.extract import RuleExtractor
from attestor_arango.ingest.pipeline import Backends
from attestor_arango.ingest.resolve import RuleResolver
from attestor_arango.interfaces.api.app import ApiSettings, create_app
from attestor_arango.llm.base import LLMError
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded.connection import Op

# the timeout fires at once; the grace is long, so a call that can finish does
SETTINGS = ApiSettings(request_timeout_s=0.05, cancel_grace_s=60.0)


def wait_for_the_timeout() -> None:
    """Blocks the worker until the REST layer's timeout fired for its call."""
    flag = cancel.current()
    if flag is not None:
        flag.timed_out.wait(60.0)


class HoldAtCommit:
    """Wraps the store's commit listener: once ``armed``, its ``at``-th commit waits for
    the request's timeout either just before COMMIT (``where="before"``) or just after
    it (``where="after"``)."""

    def __init__(self, inner: Any, *, where: str, at: int = 1) -> None:
        self.inner, self.where, self.at = inner, where, at
        self.armed = False
        self.commits = 0

    def refresh(self) -> None:
        self.inner.refresh()

    def prepare(self, ops: list[Op]) -> Any:
        if self.armed:
            self.commits += 1
            if self.where == "before" and self.commits == self.at:
                wait_for_the_timeout()
        return self.inner.prepare(ops)

    def committed(self, ops: list[Op], prepared: Any) -> None:
        self.inner.committed(ops, prepared)
        if self.armed and self.where == "after" and self.commits == self.at:
            wait_for_the_timeout()


def held(mem: AgentMemory, *, where: str, at: int = 1) -> HoldAtCommit:
    db = mem.store.db  # type: ignore[attr-defined]
    hold = HoldAtCommit(db.listener, where=where, at=at)
    db.listener = hold
    return hold


# route, path (``{id}``: the seeded acme memory), body; each writes when it runs
WRITES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("add", "POST", "/v1/memories", {"content": "Ann likes black tea", "entity": "ann"}),
    ("update", "PATCH", "/v1/memories/{id}", {"content": "Ann likes white tea"}),
    ("forget", "POST", "/v1/memories/{id}/forget", {"reason": "wrong"}),
    ("add_turns", "POST", "/v1/turns", {"turns": [{"speaker": "user", "text": "hi there"}]}),
    ("ingest_round", "POST", "/v1/ingest", {"turn": {"user": "I live in Paris"}}),
    ("reflect", "POST", "/v1/reflect", {}),
    ("consolidate", "POST", "/v1/consolidate", {}),
    ("set_quota", "POST", "/v1/governance/quota", {"user": "acme", "daily_writes": 5}),
    ("purge_user", "POST", "/v1/governance/purge", {"user": "acme", "reason": "erasure #1"}),
    ("export_user", "POST", "/v1/governance/export", {"user": "acme"}),
    ("compact", "POST", "/v1/governance/compact", {"older_than": "1d"}),
]


def _seeded(path: Path) -> tuple[AgentMemory, str]:
    """``seeded``'s two tenants under a manual clock; the acme memory archived two days
    ago besides, so ``compact`` has a row to remove. Returns the memory and its id."""
    clock = ManualClock()
    mem = AgentMemory(path, embedder=HashingEmbedder(64), clock=clock)
    ours = mem.add("Ann likes green tea", entity="ann", category="drink", context=CTX).id
    mem.add("Bob likes coffee", entity="bob", category="drink", context=OTHER)
    gone = mem.add("Ann lives in Rome", entity="ann", category="home", context=CTX).id
    mem.forget(gone, context=CTX)
    clock.advance(days=2)
    return mem, ours


@pytest.mark.parametrize(("op", "method", "path", "body"), WRITES, ids=[w[0] for w in WRITES])
def test_a_write_held_past_the_timeout_stores_nothing(
    tmp_path: Path, op: str, method: str, path: str, body: dict[str, Any]
) -> None:
    mem, ours = _seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, acme_ring(), SETTINGS), raise_server_exceptions=False)
    before = stored(mem)
    held(mem, where="before").armed = True
    answer = client.request(method, path.format(id=ours), json=body, headers=AUTH)
    assert answer.status_code == 504, answer.text
    assert answer.json()["code"] == "cancelled"
    assert "nothing" in answer.json()["message"]
    assert stored(mem) == before
    mem.close()


def test_an_import_held_past_the_timeout_stores_nothing(tmp_path: Path) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    data = mem.export_user("acme", context=CTX)
    assert mem.purge_user("acme", "move the tenant", context=CTX).ok
    client = TestClient(create_app(mem, acme_ring(), SETTINGS), raise_server_exceptions=False)
    before = stored(mem)
    held(mem, where="before").armed = True
    answer = client.post("/v1/governance/import", json={"data": data}, headers=AUTH)
    assert answer.status_code == 504, answer.text
    assert answer.json()["code"] == "cancelled"
    assert stored(mem) == before
    mem.close()


class FailingExtractor(RuleExtractor):
    """Ingest keeps the episode when extraction fails: episodes left to consolidate."""

    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise LLMError("model down")


def _episodes_to_consolidate(mem: AgentMemory, texts: list[str]) -> None:
    mem.ingest_backends = Backends(FailingExtractor(), RuleResolver("user"))
    for text in texts:
        with pytest.raises(LLMError):
            mem.ingest_round({"user": text}, context=CTX)
    mem.ingest_backends = None


def _ids(mem: AgentMemory) -> set[str]:
    return {m.id for m in mem.list(limit=100, context=CTX)}


CALLS: list[tuple[str, Callable[[AgentMemory, TestClient], Any]]] = [
    (
        "consolidate",  # one commit per episode, then the audit entry
        lambda mem, client: client.post("/v1/consolidate", json={}, headers=AUTH),
    ),
    (
        "add",  # one commit
        lambda mem, client: client.post(
            "/v1/memories", json={"content": "Ann likes black tea", "entity": "ann"}, headers=AUTH
        ),
    ),
]


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize(("name", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_the_answer_says_what_was_stored_when_the_timeout_meets_a_commit(
    tmp_path: Path, name: str, call: Callable[[AgentMemory, TestClient], Any], where: str
) -> None:
    """The timeout fires while the call's first commit is about to happen (``before``:
    it is refused, nothing stored) or has just happened (``after``: the call goes on, and
    its result is the answer). Never a 504 "nothing stored" with something stored."""
    mem, _, _ = seeded(tmp_path / "m.db")
    _episodes_to_consolidate(mem, ["I live in Paris", "I work at Acme Corp"])
    client = TestClient(create_app(mem, acme_ring(), SETTINGS), raise_server_exceptions=False)
    before, ids_before = stored(mem), _ids(mem)
    held(mem, where=where).armed = True
    answer = call(mem, client)
    if where == "before":
        assert answer.status_code == 504, answer.text
        assert answer.json()["code"] == "cancelled"
        assert stored(mem) == before
    else:
        assert answer.status_code == 200, answer.text
        new = _ids(mem) - ids_before
        assert new, "the call stored something"
        result = answer.json()
        told = set(result.get("memory_ids", [])) if name == "consolidate" else {result["id"]}
        assert told == new
    mem.close()


# the same commit point in each backend, without the REST layer -----------------------------
def test_the_embedded_store_refuses_the_commit_of_a_cancelled_call(tmp_path: Path) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    flag = cancel.CallFlag()
    with cancel.cancellable(flag):
        assert flag.cancel()  # nothing committed yet: the flag rises
        with pytest.raises(CallCancelled):
            mem.forget(ours, context=CTX)
    assert stored(mem) == before
    mem.close()


def test_the_arango_store_aborts_the_commit_of_a_cancelled_call() -> None:
    db = RecordingDB()
    store = make_store(db)
    flag = cancel.CallFlag()
    with cancel.cancellable(flag):
        with store.transaction():  # the call's first commit: from now on it cannot be cancelled
            pass
        assert not flag.cancel()
        with store.transaction():
            pass
    assert [t.committed for t in db.txns] == [True, True]
    db, flag = RecordingDB(), cancel.CallFlag()
    store = make_store(db)
    with cancel.cancellable(flag):
        assert flag.cancel()
        with pytest.raises(CallCancelled), store.transaction():
            pass
    [txn] = db.txns
    assert txn.aborted and not txn.committed and not store.in_transaction


def test_a_read_under_the_write_lock_leaves_the_call_cancellable(tmp_path: Path) -> None:
    """``update`` reads its row in a transaction of its own, then writes in a second one: the
    first changes no row, so a timeout before the second still cancels the whole call."""
    mem, ours, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, acme_ring(), SETTINGS), raise_server_exceptions=False)
    before = stored(mem)
    held(mem, where="before", at=2).armed = True
    answer = client.patch(f"/v1/memories/{ours}", json={"content": "Ann likes mint"}, headers=AUTH)
    assert answer.status_code == 504, answer.text
    assert answer.json()["code"] == "cancelled"
    assert stored(mem) == before
    mem.close()
