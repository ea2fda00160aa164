"""Session 30 attack: a recall id confirmed a guessed query to anyone holding a trace file.

The recall id was the plain SHA-256 of the recall's inputs. Every input but the query is in
the trace's start event (tenant, namespace, as_of, window, budget), the default retrieval
config is in the package, and the trace keeps no query text (``include_content`` off) so
that it is no second copy of the memory. Yet whoever read the file (a trace moved to a log
volume, pasted into a ticket) or a pack carrying the id hashed a guess with the recorded
inputs and learnt whether the subject had asked it. The id is now keyed by the store
(``core/recall_key.py``): the same recall has the same id in one store, reopened too (a
replay still matches), and another id in another store; the public code alone confirms
nothing.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.config import Config, TraceSettings, default_data_dir
from attestor_arango.core.recall_key import key_path
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import StoreError
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.config import RetrievalConfig
from attestor_arango.retrieval.trace import recall_id
from attestor_arango.scope import Scope

CTX = AgentContext(agent_id="orch", role="orchestrator", tenant="acme", namespace="n1")


def _memory(folder: Path) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"))
    config = Config(path=str(folder / "mem.db"), trace=trace)
    return AgentMemory(config=config, embedder=HashingEmbedder(64), context=CTX)


def _starts(folder: Path) -> list[dict[str, object]]:
    """The start events of every recall traced under ``folder``."""
    events = [
        json.loads(line)
        for file in sorted((folder / "trace.jsonl.tenants").iterdir())
        for line in file.read_text(encoding="utf-8").splitlines()
    ]
    return [e for e in events if e["step"] == "start"]


def test_a_trace_file_confirms_no_guessed_query(tmp_path: Path) -> None:
    word = "".join(("qz", "morbil", "itis"))
    asked = f"does ann have {word}"
    mem = _memory(tmp_path)
    mem.add(f"Ann was treated for {word}")
    rid = mem.recall(asked).recall_id
    mem.close()
    (start,) = _starts(tmp_path)
    assert start["recall_id"] == rid and "query" not in start  # the trace holds no words
    window = start["window"]
    assert window is None
    config = RetrievalConfig().to_json()
    for guess in (asked, "does ann have the flu"):
        made = recall_id(str(start["tenant"]), str(start["namespace"]), guess,
                         int(start["as_of"]), None, int(start["budget"]), config)  # type: ignore[call-overload]  # fmt: skip
        assert made != rid


def test_recall_ids_are_stable_in_one_store_and_differ_across_stores(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    ids = []
    for folder in (first, first, second):  # the first store twice: closed and reopened
        folder.mkdir(exist_ok=True)
        mem = _memory(folder)
        mem.add("Ann likes green tea")
        ids.append(mem.recall("what does ann like", as_of="2020-01-01T00:00:00Z").recall_id)
        mem.close()
    assert ids[0] == ids[1] != ids[2]


def test_the_key_is_kept_in_the_store_and_a_bad_legacy_file_fails_closed(tmp_path: Path) -> None:
    """The key is a row of the store (session 31: no file beside it is made); a session-30
    key file at ``<db>.recall-key`` is still read, and one that holds no key, or a link
    there, is refused (typed) and left as it was: replacing it would silently give every
    recorded recall new ids, following a link would let whoever planted it choose the key."""
    mem = _memory(tmp_path)
    mem.add("Ann likes green tea")
    key = key_path(mem.config)
    assert key is not None and key in mem.config.store_files()  # no command writes over it
    mem.recall("what does ann like", as_of="2020-01-01T00:00:00Z")
    assert not key.exists()
    kept = mem.store.get_recall_key(Scope("acme"))
    assert kept is not None and re.fullmatch(r"[0-9a-f]{64}", kept)
    mem.close()

    for bad in ("not a key\n", "ab" * 32 + "\n"):
        fresh = tmp_path / bad[:2]
        fresh.mkdir()
        if bad.startswith("ab"):  # a link to a file holding a key
            (fresh / "planted").write_text(bad, encoding="ascii")
            (fresh / "mem.db.recall-key").symlink_to(fresh / "planted")
            match = "cannot be read"
        else:
            (fresh / "mem.db.recall-key").write_text(bad, encoding="ascii")
            match = "holds no recall-id key"
        other = _memory(fresh)
        with pytest.raises(StoreError, match=match):
            other.recall("what does ann like")
        assert other.store.get_recall_key(Scope("acme")) is None  # nothing kept
        assert (fresh / "mem.db.recall-key").read_text(encoding="ascii") == bad
        other.close()


def test_two_stores_on_one_file_keep_the_key_the_first_kept(tmp_path: Path) -> None:
    """A key kept meanwhile by another process is the one kept (never replaced); the later
    caller gets it back."""
    a = _memory(tmp_path)
    b = _memory(tmp_path)
    scope = Scope("acme")
    assert a.store.put_recall_key(scope, "cd" * 32) == "cd" * 32  # as if another process
    assert b.store.put_recall_key(scope, "ef" * 32) == "cd" * 32
    ask = {"query": "what does ann like", "as_of": "2020-01-01T00:00:00Z"}
    assert a.recall(**ask).recall_id == b.recall(**ask).recall_id  # type: ignore[arg-type]
    a.close()
    b.close()


def test_a_seeded_id_source_gives_its_seeds_key_and_moves_no_id_or_salt() -> None:
    from attestor_arango.ids import SeededIdSource, new_key

    one, two = SeededIdSource(7), SeededIdSource(7)
    assert new_key(one) == new_key(one) == new_key(two) != new_key(SeededIdSource(8))
    assert len(new_key(object())) == 32 and new_key(object()) != new_key(object())
    assert one.new_id(1000) == two.new_id(1000) and one.new_salt() == two.new_salt()


def test_an_arango_store_keeps_its_key_in_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    config = Config(backend="arangodb")
    path = key_path(config)
    assert path is not None and path.parent == default_data_dir()
    assert path.name == f"recall-key-{config.arango.database}"
    assert key_path(Config(path=":memory:")) is None
