"""Attack battery: every way a subject's words get into the embedded store, then the erasure
the README gives a user (``purge_user``), then every byte under the store's folder scanned.

Each word enters by one path (content, a superseding update, a valid-from fact, an
ingested round and its episode, entity names and relations, a category, tags, metadata
keys and values, a session id, an import, recall and search with tracing on, a reflection),
is built at run time (no constant of this module holds it), and is looked for after the
purge, after a close and after a reopen in every file under the folder (the SQLite file,
its WAL and journal, the ``*.idx`` directory, the trace file and any temporary file
beside them) in the forms a scan would try: the word, lower-cased, its stem and scoring
terms from ``text/`` (the one tokeniser), and its middle (a full-text index keeps a term
without the prefix it shares with the one before). Reads after a reopen (recall, search,
list with closed rows and ``as_of``, timeline, current facts, export, the audit trail's
entries) must show nothing of it either.

Scope identifiers (tenant, namespace, agent id) are left out on purpose: the audit chain
keeps them as the legal record of the erasure (docs/design-notes.md, Governance).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.text.stemming import scoring_terms, stem
from tests.forged_chain import rechained  # as a package: subprocesses import this module

ORCH = AgentRole.ORCHESTRATOR
START = datetime(2026, 1, 1, tzinfo=UTC)  # the clock fixture's start, for subprocesses
PATHS = (
    "content",
    "updated",
    "dated",
    "entity",
    "target",
    "category",
    "tag",
    "metakey",
    "metavalue",
    "session",
    "turn",
    "imported",
    "query",
)


def _markers() -> dict[str, str]:
    """One distinctive word per way in, made at run time from its path's name."""
    return {path: "zq" + "".join(reversed(path)) + "vxk" for path in PATHS}


def forms(word: str) -> set[str]:
    """What a scan of the bytes would look for: the word as written and lower-cased, the
    stem and scoring terms of the one tokeniser, and the middle of the word."""
    out = {word, word.lower(), stem(word.lower()), *scoring_terms(word), word.lower()[2:-2]}
    return {f.lower() for f in out if len(f) >= 6}


def holders(folder: Path, words: dict[str, str]) -> list[tuple[str, str, str]]:
    """(way in, form, file) for every form of every word found in any file under ``folder``."""
    found = []
    files = [f for f in sorted(folder.rglob("*")) if f.is_file()]
    blobs = {f: f.read_bytes().lower() for f in files}
    for path, word in sorted(words.items()):
        for form in sorted(forms(word)):
            found.extend(
                (path, form, str(f.relative_to(folder))) for f in files if form.encode() in blobs[f]
            )
    return found


def _memory(folder: Path, clock: ManualClock, text_index: str, seed: int) -> AgentMemory:
    trace = TraceSettings(enabled=True, path=str(folder / "trace.jsonl"), include_content=True)
    config = Config(path=str(folder / "mem.db"), trace=trace, text_index=text_index)
    return AgentMemory(
        folder / "mem.db",
        config=config,
        embedder=HashingEmbedder(64),
        clock=clock,
        ids=SeededIdSource(seed),
    )


def _write_every_way(mem: AgentMemory, w: dict[str, str], ctx: AgentContext) -> None:
    first = mem.add(
        f"{w['content'].capitalize()} lives in Paris",
        entity=w["entity"],
        category=w["category"],
        tags=[w["tag"]],
        metadata={w["metakey"]: w["metavalue"], "note": f"told by {w['metavalue']}"},
        context=ctx,
    )
    mem.update(first.id, content=f"{w['updated']} moved to Lyon", context=ctx)
    mem.add(f"{w['dated']} started the job", valid_from="2020-05-01", context=ctx)
    mem.add(f"{w['entity']} manages {w['target']}", entity=w["target"], context=ctx)
    session = ctx.with_session(w["session"])
    round_ = {"user": f"I am {w['turn']} and I moved to Nice", "assistant": "Noted."}
    mem.ingest_round(round_, context=session)
    mem.add_turns([{"speaker": "user", "text": f"{w['turn']} says hi"}], context=session)
    mem.reflect(min_episodes=1, context=ctx)
    for query in (f"where does {w['query']} live", f"{w['content']} Paris", w["entity"]):
        mem.recall(query, context=ctx)
        mem.search(query, context=ctx)


@pytest.mark.parametrize("text_index", ["memory", "fts5"])
def test_purge_user_leaves_no_form_of_any_word_on_disk_or_in_any_read(
    tmp_path: Path, clock: ManualClock, text_index: str
) -> None:
    words, kept = _markers(), "qorvandel"
    subject = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
    other = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")
    mem = _memory(tmp_path, clock, text_index, seed=1)
    _write_every_way(mem, words, subject)
    mem.add(f"{kept} lives in Rome", context=other)
    # an import into a second tenant of the subject (the same person's export restored)
    dump = json.dumps(mem.export_user("subject", context=subject))
    dump = re.sub(words["content"], words["imported"], dump, flags=re.IGNORECASE)
    dump = dump.replace('"subject"', '"subject2"')
    second = AgentContext(agent_id="orch", role=ORCH, tenant="subject2", namespace="n1")
    mem.import_user(rechained(json.loads(dump)), context=second)  # edited, chain made to agree
    mem.close()
    mem = _memory(tmp_path, clock, text_index, seed=2)  # the indexes read back from files
    assert mem.recall(f"{words['content']} Paris", context=subject).results
    seen = {path for path, _, _ in holders(tmp_path, words)}
    assert seen == set(words), sorted(set(words) - seen)  # the premise: every word went in

    for tenant, ctx in (("subject", subject), ("subject2", second)):
        report = mem.purge_user(tenant, "GDPR erasure request #21", context=ctx)
        assert report.ok, report.to_dict()

    assert holders(tmp_path, words) == []
    mem.close()
    assert holders(tmp_path, words) == []
    mem = _memory(tmp_path, clock, text_index, seed=3)
    every = list(words.values())
    for ctx in (subject, second):
        assert mem.list(status="all", limit=1000, context=ctx) == []
        assert mem.list(as_of="2021-01-01", status="all", context=ctx) == []
        assert mem.current_facts(context=ctx) == []
        assert mem.timeline(words["entity"], context=ctx) == []
        for word in every:
            assert not mem.recall(word, context=ctx).results
            assert mem.search(word, context=ctx) == []
        exported = json.dumps(mem.export_user(ctx.tenant, context=ctx)).lower()
        audit = json.dumps([e.model_dump(mode="json") for e in mem.audit_log(context=ctx)]).lower()
        for word in every:
            assert not forms(word) & set(exported.split('"')), word
            assert all(form not in audit for form in forms(word)), word
    assert [r.memory.content for r in mem.recall(kept, context=other).results] == [
        f"{kept} lives in Rome"
    ]
    mem.close()


def test_purge_user_erases_the_trace_file_tracing_wrote_before_it_was_turned_off(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Tracing is switched off by ``trace.enabled: false`` with its path left in the config
    (the file stays where it was written): the subject's traced queries are in that file,
    and the purge run after the switch must take them out all the same."""
    word = "zq" + "mirrowdale" + "vxk"
    subject = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
    mem = _memory(tmp_path, clock, "memory", seed=1)
    mem.add(f"{word} lives in Paris", context=subject)
    mem.recall(f"where does {word} live", context=subject)
    mem.close()
    assert holders(tmp_path, {"query": word})  # the premise: the traced query is on disk
    trace = TraceSettings(enabled=False, path=str(tmp_path / "trace.jsonl"))
    config = Config(path=str(tmp_path / "mem.db"), trace=trace)
    mem = AgentMemory(config=config, embedder=HashingEmbedder(64), clock=clock)

    report = mem.purge_user("subject", "GDPR erasure request #22", context=subject)

    assert report.ok, report.to_dict()
    assert report.removed["trace_events"] > 0
    assert holders(tmp_path, {"query": word}) == []
    mem.close()


def test_purge_user_erases_the_default_trace_file_after_tracing_is_turned_off(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tracing on without a path writes beside the default store (``$XDG_DATA_HOME``);
    switched off later, the config names no path at all, and the purge must still find
    the subject's traced queries in that default file."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    word = "zq" + "brackenholt" + "vxk"
    subject = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
    trace = TraceSettings(enabled=True, include_content=True)
    traced = Config(path=str(tmp_path / "mem.db"), trace=trace)
    mem = AgentMemory(config=traced, embedder=HashingEmbedder(64), clock=clock)
    mem.add(f"{word} lives in Paris", context=subject)
    mem.recall(f"where does {word} live", context=subject)
    mem.close()
    assert holders(tmp_path / "data", {"query": word})  # the premise: the default file holds it
    off = Config(path=str(tmp_path / "mem.db"), trace=TraceSettings(enabled=False))
    mem = AgentMemory(config=off, embedder=HashingEmbedder(64), clock=clock)

    report = mem.purge_user("subject", "GDPR erasure request #23", context=subject)

    assert report.ok, report.to_dict()
    assert report.removed["trace_events"] > 0
    assert holders(tmp_path, {"query": word}) == []
    mem.close()


def test_purge_over_rest_leaves_no_word_in_the_folder_or_the_servers_log(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The same erasure through the REST service, the way a client of the service does it:
    the words sent in bodies (fact, entity, tags, metadata, a round, queries) leave nothing
    in the store's folder, and no log line of the service holds one."""
    import logging

    from starlette.testclient import TestClient

    from attestor_arango.interfaces.api.app import create_app
    from attestor_arango.interfaces.api.auth import ApiKey, KeyRing, hash_key

    words = _markers()
    mem = _memory(tmp_path, clock, "memory", seed=1)
    key = ApiKey(id="k", sha256=hash_key("sk"), tenant="subject", roles=("orchestrator",),
                 agent_ids=("orch",))  # fmt: skip
    client = TestClient(create_app(mem, KeyRing([key])), raise_server_exceptions=False)
    auth = {"Authorization": "Bearer sk", "X-Agent-Id": "orch", "X-Namespace": "n1"}
    caplog.set_level(logging.DEBUG)
    fact = {
        "content": f"{words['content']} lives in Paris",
        "entity": words["entity"],
        "category": words["category"],
        "tags": [words["tag"]],
        "metadata": {words["metakey"]: words["metavalue"]},
    }
    calls = [
        ("/v1/memories", fact),
        ("/v1/ingest", {"turn": {"user": f"I am {words['turn']}", "assistant": "Noted."}}),
        ("/v1/recall", {"query": f"where does {words['query']} live"}),
        ("/v1/search", {"query": words["content"]}),
        ("/v1/memories", {"content": "x" * 40_000 + words["updated"]}),  # refused: too long
    ]
    answers = [client.post(path, json=body, headers=auth).status_code for path, body in calls]
    assert answers[:4] == [200] * 4 and answers[4] == 422, answers
    assert holders(tmp_path, {k: words[k] for k in ("content", "entity", "query", "turn")})

    purge = {"user": "subject", "reason": "GDPR erasure request #23"}
    answer = client.post("/v1/governance/purge", json=purge, headers=auth)

    assert answer.status_code == 200 and answer.json()["ok"], answer.text
    assert holders(tmp_path, words) == []
    logged = "\n".join(r.getMessage() for r in caplog.records).lower()
    assert logged and all(f not in logged for w in words.values() for f in forms(w))
    mem.close()
    assert holders(tmp_path, words) == []
