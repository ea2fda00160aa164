"""Session 31 attack: an unexpected failure wrote the request's words into the server log.

The REST handler, the Evidence Board's pages and its chain verification logged an
unexpected exception with ``log.exception``, and the MCP SDK logged a crashing tool's
exception the same way: the traceback carries every exception's message, chained ones
too, and a message may quote what the request carried. Here an embedder refuses a memory
(as a provider's client does) with the memory's text in its error: ``POST /v1/memories``
answered 500 and the server's stderr held the subject's words, which no ``purge_user``
reaches. The log now names the route, the error class and the frames, each message
withheld (``interfaces/api/logs.py: log_failure``); the caller's answer is unchanged.

The words are made at run time (no constant of this module holds them).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from attack_support import AUTH, CTX, acme_ring
from interface_support import running_server
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.interfaces.api import logs
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.interfaces.ui.verify import Run, Verifications
from attestor_arango.memory import AgentMemory

WORD = "".join(("qz", "morbil", "itis"))


class Refusing(HashingEmbedder):
    """An embedder whose provider refuses a text quoting it, raised from a lookup that
    quotes it too (the chain a traceback prints)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        for text in texts:
            if WORD in text:
                try:
                    raise KeyError(text)
                except KeyError as inner:
                    raise RuntimeError(f"provider refused input {text!r}") from inner
        return super().embed(texts)


@pytest.fixture
def server_log(capsys: pytest.CaptureFixture[str]) -> Any:
    """The package's logs as the served process writes them (``configure``: stderr)."""
    root = logging.getLogger("attestor_arango")
    saved = root.handlers[:], root.level, root.propagate
    yield lambda fmt: logs.configure(fmt)
    root.handlers[:], root.level, root.propagate = saved


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_rest_failure_logs_no_word_of_the_request(
    tmp_path: Path, fmt: str, server_log: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=Refusing(64))
    server_log(fmt)
    import httpx

    with running_server(mem, acme_ring()) as url:
        answer = httpx.post(
            f"{url}/v1/memories", json={"content": f"Ann has {WORD}"}, headers=AUTH, timeout=30
        )
    assert answer.status_code == 500 and answer.json()["code"] == "internal_error"
    assert WORD not in answer.text
    err = capsys.readouterr().err
    assert WORD not in err  # was: both messages, in the traceback's chain
    request_id = answer.headers["x-request-id"]
    assert request_id in err and "add failed: RuntimeError" in err  # enough to debug
    assert "KeyError: <message withheld" in err and "core/writes.py" in err
    mem.close()


def test_a_crashing_mcp_tool_logs_no_word_of_the_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=Refusing(64))
    server = build_server(mem, context=CTX)
    caplog.set_level(logging.DEBUG)

    async def call() -> ToolError:
        with pytest.raises(ToolError) as failed:
            await server.call_tool("memory_add", {"content": f"Ann has {WORD}"})
        return failed.value

    failed = asyncio.run(call())
    # the SDK logs an UnexpectedToolError's cause with its traceback; a ToolError by its text
    assert not isinstance(failed, UnexpectedToolError) and failed.__cause__ is None
    assert json.loads(str(failed))["code"] == "internal_error" and WORD not in str(failed)
    text = caplog.text + "".join(
        logging.Formatter().formatException(r.exc_info) for r in caplog.records if r.exc_info
    )
    assert WORD not in text and "tool memory_add failed: " in text
    assert "RuntimeError: <message withheld" in text  # the cause, in the chain
    mem.close()


def test_the_boards_chain_verification_logs_no_word_nor_tenant(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def call(op: str) -> Any:
        raise RuntimeError(f"chain of {WORD} broke")

    reader = SimpleNamespace(call=call, context=SimpleNamespace(tenant=f"tenant-{WORD}"))
    run = Run(head=None)
    caplog.set_level(logging.DEBUG)
    Verifications._verify(reader, run)  # type: ignore[arg-type]
    assert run.done and run.error is not None and WORD not in run.error
    records = "".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
    )
    assert WORD not in records and "RuntimeError" in records


def test_a_failing_board_page_logs_no_word_of_its_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from starlette.testclient import TestClient

    from attestor_arango.interfaces.api.app import create_app
    from attestor_arango.interfaces.ui import views

    def broken(r: Any, query: Any) -> Any:
        raise RuntimeError(f"no page for {query.get('q')!r}")

    monkeypatch.setattr(views, "memories", broken)
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    caplog.set_level(logging.DEBUG)
    page = client.get(f"/ui/memories?q={WORD}", headers=AUTH)
    assert page.status_code == 500 and "server log" in page.text
    records = "".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
        if not r.name.startswith("httpx")  # the test's own client, which logs the URL it asks
    )
    assert WORD not in records and "Evidence Board page memories failed: RuntimeError" in records
    mem.close()


@pytest.mark.parametrize("include_content", [False, True])
def test_a_traced_lane_error_keeps_no_word_of_the_query(
    tmp_path: Path, include_content: bool
) -> None:
    """The same leak into the trace file: a lane's error was written verbatim, and the
    embedder's refusal quotes the query the trace otherwise never keeps. Without
    ``include_content`` the event keeps the error's type and its message's length."""
    from attestor_arango.config import Config, TraceSettings

    trace = TraceSettings(
        enabled=True, path=str(tmp_path / "t.jsonl"), include_content=include_content
    )
    config = Config(path=str(tmp_path / "m.db"), trace=trace)
    mem = AgentMemory(config=config, embedder=Refusing(64), context=CTX)
    mem.add("Ann likes green tea")
    answer = mem.recall(f"does ann have {WORD}")
    assert WORD in answer.errors["vector_error"]  # the caller still reads it whole
    events = [
        json.loads(line)
        for file in (tmp_path / "t.jsonl.tenants").iterdir()
        for line in file.read_text(encoding="utf-8").splitlines()
    ]
    (failed,) = [e for e in events if e["step"] == "vector"]
    if include_content:
        assert failed["error"] == answer.errors["vector_error"]
    else:
        assert failed["error"].startswith("RuntimeError: <message withheld, ")
        assert not any(WORD in json.dumps(e) for e in events)
    mem.close()
