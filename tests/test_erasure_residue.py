"""Erasure leaves nothing in the process either: after ``purge_user``, a compaction or a
retention ``delete``, no string or bytes object anywhere in the interpreter's reachable
containers holds a word of the removed rows (the package's memos of stems, scoring
terms, token counts, time cues and stored-key words included), and the store's files
on disk (SQLite file, WAL, the side index files) hold none of it, before and after close.

The words are built at run time, so the test's own constants do not hold them; the
scan skips the one needle object the test keeps.
"""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from forged_chain import rechained

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.scope import Scope
from attestor_arango.store.embedded import vectors

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")
_CONTAINERS = (dict, list, tuple, set, frozenset)


def _word(*parts: str) -> str:
    """A word no constant of this module holds: made at run time from its parts."""
    return "".join(parts)


def reachable_holders(needle: str) -> list[str]:
    """What holds a string or bytes containing ``needle`` (any case), besides the scan's own needle.

    Every object the garbage collector tracks is a root; containers it does not track
    (dicts of strings, tuples of strings: what the memos hold) are walked through, and
    a dict's keys are read too (the collector's walk of a string-keyed dict skips them).
    """
    gc.collect()
    low, raw = needle.lower(), needle.lower().encode()
    found: list[str] = []
    walked: set[int] = set()

    def inner(obj: Any) -> list[Any]:
        if isinstance(obj, dict):
            return [*obj.keys(), *obj.values()]
        return list(gc.get_referents(obj))

    def holds(obj: Any) -> bool:
        if obj is needle or obj is low or obj is raw:  # the scan's own
            return False
        if isinstance(obj, str):
            return low in obj.lower()
        if isinstance(obj, bytes | bytearray | memoryview):
            return raw in bytes(obj).lower()
        return False

    roots = gc.get_objects()
    for root in roots:
        if root is roots or root is found or root is walked:
            continue
        stack = [root]
        while stack:
            obj = stack.pop()
            for child in inner(obj):
                if holds(child):
                    found.append(f"{type(root).__qualname__}: {str(child)[:80]!r}")
                elif (
                    isinstance(child, _CONTAINERS)
                    and not gc.is_tracked(child)
                    and id(child) not in walked
                ):
                    walked.add(id(child))
                    stack.append(child)
    return found


def _files_holding(folder: Path, needle: str) -> list[str]:
    """Files holding the word, or its middle: a full-text index stores its terms stemmed,
    each with the prefix it shares with the term before it left out."""
    raw = needle.lower()[2:-2].encode()
    return [
        f.name for f in sorted(folder.rglob("*")) if f.is_file() and raw in f.read_bytes().lower()
    ]


def _deleted_mappings(folder: Path) -> list[str]:
    """Files of ``folder`` this process still maps though they were deleted (Linux)."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return []
    lines = maps.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if str(folder) in line and line.endswith("(deleted)")]


def _memory(folder: Path, clock: ManualClock, tracing: bool = False, seed: int = 11) -> AgentMemory:
    config = None
    if tracing:
        trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), include_content=True)
        config = Config(path=str(folder / "mem.db"), trace=trace)
    return AgentMemory(
        folder / "mem.db",
        config=config,
        embedder=HashingEmbedder(64),
        clock=clock,
        ids=SeededIdSource(seed),
    )


def _fill(mem: AgentMemory, ctx: AgentContext, word: str, turn: bool = True) -> list[str]:
    """Rows that send ``word`` through every memo: adds, "when" recalls, packing, and with
    ``turn`` an ingested turn (its episode, its graph entities: rows only a purge removes)."""
    ids = [
        mem.add(f"{word.capitalize()} lives in Paris since May 2020", context=ctx).id,
        mem.add(f"{word} likes green tea", category="pref", context=ctx).id,
        mem.add(f"met the {word}s last week in Lyon", context=ctx).id,
    ]
    if turn:
        turn_text = {"user": f"I am {word} and I moved to Nice", "assistant": "Noted."}
        mem.ingest_round(turn_text, context=ctx)
        mem.add(f"{word} is the user", entity=word, category="name", context=ctx)
    for query in (f"When did {word} move to Paris?", f"what does {word} like", f"{word}s"):
        assert mem.recall(query, context=ctx).results
    return ids


@pytest.mark.parametrize("tracing", [False, True], ids=["tracing off", "tracing on"])
def test_purge_user_leaves_no_word_of_the_subject_in_the_process_or_files(
    tmp_path: Path, clock: ManualClock, tracing: bool
) -> None:
    secret, kept = _word("zyx", "wvbq", "kal"), _word("quorn", "flax", "ide")
    mem = _memory(tmp_path, clock, tracing)
    _fill(mem, SUBJECT, secret)
    _fill(mem, OTHER, kept)
    mem.close()  # reopened: the indexes are now mapped from their files
    mem = _memory(tmp_path, clock, tracing, seed=12)
    assert mem.recall(f"{secret} tea", context=SUBJECT).results
    assert reachable_holders(secret) and _files_holding(tmp_path, secret), "the scans must see it"
    other_before = [r.memory.id for r in mem.recall(f"{kept} Paris", context=OTHER).results]

    report = mem.purge_user("subject", "GDPR erasure request #7", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert sorted(set(reachable_holders(secret))) == []
    assert _files_holding(tmp_path, secret) == []
    assert _deleted_mappings(tmp_path) == []
    # the other tenant's rows are untouched and rank as before
    assert reachable_holders(kept)
    assert [r.memory.id for r in mem.recall(f"{kept} Paris", context=OTHER).results] == (
        other_before
    )
    mem.close()
    assert _files_holding(tmp_path, secret) == []


def _open_files(folder: Path) -> list[str]:
    """Files of ``folder`` this process holds open (Linux), deleted ones marked as such."""
    fds = Path("/proc/self/fd")
    if not fds.exists():
        pytest.skip("needs /proc/self/fd (Linux)")
    held = []
    for fd in fds.iterdir():
        try:
            target = str(fd.readlink())
        except OSError:  # closed while listed (the listing's own descriptor)
            continue
        if str(folder) in target:
            held.append(target)
    return held


def _deleted_descriptors(folder: Path) -> list[str]:
    """Deleted files of ``folder`` still open: the file system keeps their blocks, and so
    their bytes, until the last descriptor closes."""
    return [f for f in _open_files(folder) if f.endswith("(deleted)")]


def test_purge_user_closes_the_descriptors_of_a_large_index_it_deletes(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large persisted vector matrix is read with positional reads on a descriptor of its
    file (IndexFile.read_rows); the purge deletes the file, and no descriptor may keep its
    blocks (the subject's vectors) allocated. The thresholds are lowered so that 1,500 rows
    take that path."""
    monkeypatch.setattr(vectors, "_RESIDENT_BYTES", 0)
    monkeypatch.setattr(vectors, "_INT8_ROWS", 64)
    mem = _memory(tmp_path, clock)
    for i in range(1500):
        mem.add(f"zyxwvbq fact {i} about tea", context=SUBJECT)
    mem.close()  # written to the index files, then mapped back on the next open
    mem = _memory(tmp_path, clock, seed=12)
    for query in ("zyxwvbq tea", "fact 17", "tea 3"):
        assert mem.recall(query, context=SUBJECT).results
    opened = [p for p in _open_files(tmp_path) if p.endswith(".vectors")]
    assert len(opened) >= 2, opened  # the mapping's and read_rows' descriptors

    assert mem.purge_user("subject", "GDPR erasure request #8", context=SUBJECT).ok
    assert _deleted_descriptors(tmp_path) == []
    mem.close()


def test_compaction_leaves_no_word_of_the_removed_rows(tmp_path: Path, clock: ManualClock) -> None:
    gone, stays = _word("vrell", "ophane"), _word("marbl", "ewick")
    mem = _memory(tmp_path, clock)
    ids = _fill(mem, SUBJECT, gone, turn=False)
    _fill(mem, SUBJECT, stays)
    for memory_id in ids:
        mem.forget(memory_id, reason="asked", context=SUBJECT)
    assert reachable_holders(gone) and _files_holding(tmp_path, gone)
    clock.advance(days=2)

    result = mem.compact(older_than="1d", context=SUBJECT)

    assert result["removed"] == len(ids)
    assert reachable_holders(gone) == []
    assert _files_holding(tmp_path, gone) == []
    assert mem.recall(f"{stays} Paris", context=SUBJECT).results
    mem.close()
    assert _files_holding(tmp_path, gone) == []


def test_retention_delete_leaves_no_word_of_the_removed_rows(
    tmp_path: Path, clock: ManualClock
) -> None:
    gone = _word("trel", "quishan")
    mem = _memory(tmp_path, clock)
    scratch = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="scratch")
    _fill(mem, scratch, gone, turn=False)
    mem.add("a note that stays", context=SUBJECT)
    assert reachable_holders(gone) and _files_holding(tmp_path, gone)
    clock.advance(days=40)
    policy = [{"name": "scratch", "action": "delete", "namespace": "scratch", "older_than": "30d"}]

    report = mem.apply_retention(policy, context=SUBJECT)

    assert report.ok and report.outcomes[0].applied == 3, report.to_dict()
    assert reachable_holders(gone) == []
    assert _files_holding(tmp_path, gone) == []
    mem.close()
    assert _files_holding(tmp_path, gone) == []


def test_every_cache_of_texts_in_the_package_is_a_memo_that_an_erasure_empties() -> None:
    """A ``functools`` cache is out of ``memo.forget_all``'s reach: only these, which never
    see a memory's or a query's text, may use one (the names below are the whole list)."""
    import re

    import attestor_arango

    allowed = {
        "llm/prompts.py": 1,  # the prompt templates
        "interfaces/api/codec.py": 2,  # signatures of AgentMemory's methods
        "store/embedded/pool_bm25.py": 1,  # the stop words' stems
        "text/stemming.py": 1,  # the tokeniser's fingerprint
    }
    root = Path(attestor_arango.__file__).parent
    pattern = re.compile(r"^\s*@(?:functools\.)?(?:lru_cache|cache)\b", re.M)
    found = {
        str(p.relative_to(root)): len(pattern.findall(p.read_text(encoding="utf-8")))
        for p in sorted(root.rglob("*.py"))
    }
    assert {k: v for k, v in found.items() if v} == allowed


def test_forget_all_empties_every_memo_and_changes_no_result() -> None:
    from attestor_arango.ingest import text as ingest_text
    from attestor_arango.memo import Memo, forget_all
    from attestor_arango.text import stemming

    word = _word("glorb", "ification")
    before = (stemming.scoring_terms(f"the {word}s"), ingest_text.stem(word))
    local = Memo(str.upper, 4)
    local(word)
    assert len(stemming.scoring_terms) and len(ingest_text.stem) and len(local)
    forget_all()
    assert len(stemming.scoring_terms) == len(ingest_text.stem) == len(local) == 0
    assert (stemming.scoring_terms(f"the {word}s"), ingest_text.stem(word)) == before


def test_no_cache_hands_one_tenants_rows_or_terms_to_another(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Two tenants whose memories have the very same ids (an id one tenant holds is free
    in every other: the second tenant imports the first one's export as its own, words
    changed), read in turns so that each read finds the other tenant's rows warm in
    every cache (decoded rows, text index, vectors, the memos); then again from the
    index files after a reopen. Each tenant only ever sees its own words."""
    import json

    words = {"subject": _word("ambr", "oquist"), "other": _word("sel", "vantine")}
    ctxs = {"subject": SUBJECT, "other": OTHER}
    mem = _memory(tmp_path, clock)
    _fill(mem, SUBJECT, words["subject"], turn=False)
    dump = json.dumps(mem.export_user("subject", context=SUBJECT))
    for old, new in ((words["subject"], words["other"]), ('"subject"', '"other"')):
        dump = dump.replace(old, new).replace(old.capitalize(), new.capitalize())
    mem.import_user(rechained(json.loads(dump)), context=OTHER)  # edited, chain made to agree
    ids = {t: sorted(m.id for m in mem.list(context=c, limit=100)) for t, c in ctxs.items()}
    assert ids["subject"] and ids["subject"] == ids["other"]  # the premise: one set of ids

    def check(mem: AgentMemory) -> None:
        for _ in range(2):
            for tenant, ctx in ctxs.items():
                mine = words[tenant]
                theirs = next(w for t, w in words.items() if t != tenant)
                for query in (f"{mine} Paris", f"{theirs} Paris", "When did they move?"):
                    response = mem.recall(query, context=ctx)
                    texts = [r.memory.content.lower() for r in response.results]
                    assert texts and all(theirs not in t for t in texts), (tenant, query, texts)
                    assert all(r.memory.tenant == tenant for r in response.results)
                    assert not response.errors, response.errors
                got = [mem.get(i, context=ctx).content.lower() for i in ids[tenant]]
                assert all(mine in t for t in got), got

    check(mem)
    assert mem.store.caches.rows.hits  # the decoded rows were served from the cache
    mem.close()
    clock.advance(seconds=1)  # past the ticks of the writes above
    mem = _memory(tmp_path, clock, seed=13)
    check(mem)
    mem.close()


@pytest.mark.parametrize("how", ["compact", "retention delete"])
def test_removing_the_only_rows_naming_an_entity_removes_the_entity(
    tmp_path: Path, clock: ManualClock, how: str
) -> None:
    """An entity's name (a person's, most often) is a word of the rows naming it: once a
    compaction or a retention delete removed every row and relation naming it, its entity
    row goes too. An entity still named by a row kept (a superseded version included)
    stays, and so does every other namespace's."""
    gone, kept = _word("vrell", "ophane Mk"), _word("marbl", "ewick")
    mem = _memory(tmp_path, clock)
    scratch = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="scratch")
    ctx = scratch if how == "retention delete" else SUBJECT
    doomed = mem.add(f"{gone} lives in Quorstadt", entity=gone, category="home", context=ctx)
    first = mem.add(f"{kept} lives in Lyon", entity=kept, category="home", context=ctx)
    mem.update(first.id, content=f"{kept} lives in Nice", context=ctx)  # history stays
    archived = mem.add(f"{kept} likes tea", entity=kept, category="pref", context=ctx)
    elsewhere = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n2")
    mem.add(f"{gone} is named in another namespace", entity=gone, context=elsewhere)
    assert mem.recall(f"{gone} Quorstadt", context=ctx).results
    for memory_id in (doomed.id, archived.id):
        mem.forget(memory_id, reason="asked", context=ctx)
    clock.advance(days=40)

    if how == "compact":
        assert mem.compact(older_than="1d", context=ctx)["removed"] == 2
    else:
        policy = [{"name": "s", "action": "delete", "namespace": "scratch", "older_than": "30d"}]
        assert mem.apply_retention(policy, context=ctx).outcomes[0].applied == 4

    names = {(e.namespace, e.name) for e in mem.store.list_entities(Scope("subject"))}
    if how == "compact":
        assert names == {("n1", kept), ("n2", gone)}
    else:
        assert names == {("n2", gone)}
    with sqlite3.connect(str(tmp_path / "mem.db")) as conn:
        rows = conn.execute("SELECT namespace, name FROM entities").fetchall()
    assert (ctx.namespace, gone) not in rows
    mem.close()


@pytest.mark.parametrize("how", ["purge", "compact"])
def test_no_remnant_of_erased_rows_in_pages_still_in_use(
    tmp_path: Path, clock: ManualClock, how: str
) -> None:
    """secure_delete zeroes a deleted cell, but SQLite leaves bytes of cells it moved on a
    page that stays in use (rows of two tenants, of two lengths, interleaved: a few
    hundred are enough for a page of the FTS content table to keep the tail of an erased
    text). An erasure rewrites the file, so no such page survives it."""
    gone = _word("trunch", "villequ")
    mem = _memory(tmp_path, clock)
    ids = []
    for i in range(300):
        ids.append(mem.add(f"fact {i} about {gone}", context=SUBJECT).id)
        mem.add(f"note {i}", context=OTHER)
    assert _files_holding(tmp_path, gone)
    if how == "purge":
        assert mem.purge_user("subject", "GDPR erasure request #14", context=SUBJECT).ok
    else:
        for memory_id in ids:
            mem.forget(memory_id, reason="asked", context=SUBJECT)
        clock.advance(days=2)
        assert mem.compact(older_than="1d", context=SUBJECT)["removed"] == len(ids)
    assert _files_holding(tmp_path, gone) == []
    assert len(mem.list(limit=1000, context=OTHER)) == 300
    mem.close()
    assert _files_holding(tmp_path, gone) == []
