"""Session 30 attack: a purge run by another process, asked of a server that had read the
subject.

Session 29 made an erasure empty every other store open on the same file in the same
process. A REST server (or an MCP server) is another process: it had read the subject
(recall, search, timeline, a trace, export), so its text and vector indexes, decoded rows,
entity names and kept values held the words. The CLI purges the tenant. Every read the
server then answers must come from the rows as they are now: no recall, get, search,
timeline, current facts, list, export or recorded trace of the subject may answer with the
erased words; and once the server stops, no file beside the store holds them (a server
writing its stale index back at close would put them on disk again).

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from attestor_arango import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import NotFoundError
from attestor_arango.memory import AgentMemory
from tests.interface_support import cli_server, run_cli


@contextmanager
def _server(home: Path, **env: str) -> Iterator[str]:
    """``attestor-arango api --no-auth`` on ``home``'s store in a subprocess; its base URL."""
    with cli_server(home, "api", "--no-auth", "--log-level", "warning", **env) as run:
        yield run.base


def _reads(base: str, word: str, memory_id: str, recall_id: str) -> dict[str, Any]:
    """Every read of the subject the server answers, by name: its JSON body (or status)."""
    query = f"where does {word} live"
    with httpx.Client(base_url=base + "/v1", timeout=60) as c:
        answers = {
            "recall": c.post("/recall", json={"query": query}),
            "pack": c.post("/recall/pack", json={"query": query}),
            "search": c.post("/search", json={"query": word}),
            "get": c.get(f"/memories/{memory_id}"),
            "list": c.post("/memories/list", json={"status": "all"}),
            "timeline": c.post("/timeline", json={"entity": word}),
            "current": c.post("/facts/current", json={}),
            "export": c.post("/governance/export", json={"user": "local"}),
            "trace": c.get(f"/recall/traces/{recall_id}"),
        }
    # an answer or a not-found: a refused request (422) would hide a leak, not show none
    assert {k: r.status_code for k, r in answers.items() if r.status_code not in (200, 404)} == {}
    return {k: r.json() for k, r in answers.items()}


def _words(text: str) -> list[str]:
    """The lower-cased runs of letters, digits and dashes of ``text`` (words and ids)."""
    return re.findall(r"[a-z0-9-]+", text.lower())


def _holding(folder: Path, word: str) -> list[str]:
    return sorted(
        str(f.relative_to(folder))
        for f in folder.rglob("*")
        if f.is_file() and word.encode() in f.read_bytes().lower()
    )


def test_a_server_answers_nothing_of_a_subject_another_process_purged(tmp_path: Path) -> None:
    word = "".join(("qz", "orvandel", "ith"))
    trace = tmp_path / "trace.jsonl"
    env = {"ATTESTOR_TRACE": "1", "ATTESTOR_TRACE_PATH": str(trace)}
    with _server(tmp_path, **env) as base:
        with httpx.Client(base_url=base + "/v1", timeout=60) as c:
            added = c.post(
                "/memories", json={"content": f"{word.capitalize()} lives in Oslo", "entity": word}
            )
            assert added.is_success, added.text
            memory_id = added.json()["id"]
            recall_id = c.post("/recall", json={"query": f"where does {word} live"}).json()[
                "recall_id"
            ]
        before = _reads(base, word, memory_id, recall_id)
        # every read answered with the subject (the trace with its memory's id, the words
        # being left out of a trace by default): the server's caches hold it now
        held = {k: json.dumps(v).lower() for k, v in before.items()}
        assert [k for k, v in held.items() if word not in v and memory_id not in v] == []

        purged = run_cli(tmp_path, "purge", "--tenant", "local", "--reason", "erasure",
                         "--yes", "--json")  # fmt: skip
        assert purged.returncode == 0, purged.stderr
        assert json.loads(purged.stdout)["ok"] is True

        after = _reads(base, word, memory_id, recall_id)
        for name in ("recall", "pack"):  # the query is echoed; the answer is what counts
            after[name].pop("query", None)
        assert after["get"]["code"] == "not_found"  # its message names the id asked for
        del after["get"]
        # the audit chain keeps ids by design (the legal record of the erasure): its entries
        # are searched for the words only
        leaked = {k: v for k, v in after.items() if word in _words(json.dumps(v))}
        after["export"].pop("audit")
        leaked.update((k, v) for k, v in after.items() if memory_id in _words(json.dumps(v)))
        assert leaked == {}, json.dumps(leaked)[:3000]
    assert _holding(tmp_path, word) == []


def test_a_reader_in_this_process_answers_nothing_after_a_purge_over_rest(
    tmp_path: Path,
) -> None:
    """The reverse: the REST server purges while this process has the file open and had
    read the subject (its indexes, rows and entities loaded)."""
    word = "".join(("qz", "hallvard", "ise"))
    ctx = AgentContext(agent_id="orch", role="orchestrator", tenant="local", namespace="inbox")
    mine = AgentMemory(tmp_path / "memory.db", embedder=HashingEmbedder(64), context=ctx)
    kept = mine.add(f"{word.capitalize()} lives in Oslo", entity=word)
    query = f"where does {word} live"
    assert mine.recall(query).results and mine.search(word) and mine.timeline(word)
    with _server(tmp_path) as base:
        done = httpx.post(
            base + "/v1/governance/purge",
            json={"user": "local", "reason": "erasure request"},
            timeout=120,
        )
        assert done.is_success and done.json()["ok"] is True, done.text
    assert mine.recall(query).results == ()
    assert mine.search(word) == [] and mine.timeline(word) == []
    with pytest.raises(NotFoundError):
        mine.get(kept.id)
    assert mine.current_facts() == [] and mine.list(status="all") == []
    mine.close()
    assert _holding(tmp_path, word) == []
