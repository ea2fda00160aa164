"""Session 25 attack: the operator's endpoint credentials reached every API caller.

An embedding or LLM endpoint is often configured with its credentials in the URL
(``https://user:token@host/v1``, or a token as the user name). Every error about that
endpoint named the URL as configured, and the REST service, MCP and a recall's
``errors`` hand an error's message and details to the caller: any key of any tenant,
a reader's recall among them, was told the service's password. The keys and passwords
kept as settings (``openai_api_key``, ``ARANGO_PASSWORD``) are never shown; a password
inside a URL must not be either. Errors now name such a URL without its user part.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from attack_support import AUTH, acme_ring
from mcp.server.mcpserver.exceptions import ToolError
from starlette.testclient import TestClient

from attestor_arango import AgentContext
from attestor_arango.config import Config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.embeddings.chain import make_embedder
from attestor_arango.errors import AttestorError, EmbedderUnavailable, without_credentials
from attestor_arango.interfaces.api.app import create_app
from attestor_arango.interfaces.mcp import build_server
from attestor_arango.memory import AgentMemory

SECRET = "PWSECRET25"
TOKEN = "tok0SECRET25"
ACME = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
READER = AgentContext(agent_id="orch", role="reviewer", tenant="acme")


def _memory(tmp_path: Path, url: str) -> AgentMemory:
    """An embedder endpoint that refuses connections (a closed local port), at ``url``."""
    config = Config(
        path=str(tmp_path / "m.db"),
        embedder="openai",
        openai_base_url=url,
        embedder_dimension=64,
    )
    memory = AgentMemory(config=config)
    memory.embedder.max_retries = 0  # type: ignore[attr-defined]  # one attempt is enough
    return memory


def _clean(text: str) -> None:
    assert SECRET not in text and TOKEN not in text, text
    assert "127.0.0.1:9" in text, text  # the endpoint is still named, for the operator


def test_rest_errors_and_recall_errors_do_not_carry_the_endpoint_password(
    tmp_path: Path,
) -> None:
    mem = _memory(tmp_path, f"http://svc:{SECRET}@127.0.0.1:9/v1")
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)

    added = client.post("/v1/memories", json={"content": "Ann likes tea"}, headers=AUTH)
    assert added.status_code == 503, added.text
    _clean(added.text)
    recalled = client.post("/v1/recall", json={"query": "tea"}, headers=AUTH)
    assert recalled.status_code == 200, recalled.text
    assert recalled.json()["errors"]["vector_error"]
    _clean(recalled.text)
    mem.close()


def test_mcp_error_results_do_not_carry_the_endpoint_token(tmp_path: Path) -> None:
    mem = _memory(tmp_path, f"https://{TOKEN}@127.0.0.1:9/v1")
    server = build_server(mem, ACME)

    try:
        asyncio.run(server.call_tool("memory_add", {"content": "Ann likes tea"}))
    except ToolError as exc:
        _clean(str(exc))
    else:
        raise AssertionError("the add should fail: the endpoint refuses connections")
    result = asyncio.run(server.call_tool("memory_recall", {"query": "tea"}))
    _clean(json.dumps(result, default=str))
    mem.close()


def test_in_process_errors_name_the_endpoint_without_its_user_part(tmp_path: Path) -> None:
    mem = _memory(tmp_path, f"http://svc:{SECRET}@127.0.0.1:9/v1")
    try:
        mem.add("Ann likes tea", context=ACME)
    except EmbedderUnavailable as exc:
        _clean(str(exc))
        _clean(json.dumps(exc.to_dict()))
    else:
        raise AssertionError("the add should fail: the endpoint refuses connections")
    _clean(json.dumps(mem.recall("tea", context=READER).errors))
    mem.close()


def test_a_password_holding_an_at_sign_is_hidden_whole() -> None:
    """A client takes the last @ of the authority as its end: so does the redaction."""
    err = AttestorError(f"cannot reach http://svc:{SECRET}@x@127.0.0.1:9/v1 now")
    assert err.message == "cannot reach http://***@127.0.0.1:9/v1 now"


def test_an_error_message_keeps_urls_without_credentials_as_they_are() -> None:
    plain = "cannot reach http://127.0.0.1:9/v1/embeddings; see https://example.org/a@b"
    assert AttestorError(plain, url="http://127.0.0.1:9/v1").to_dict() == {
        "code": "attestor_error",
        "message": plain,
        "details": {"url": "http://127.0.0.1:9/v1"},
    }


def test_the_server_log_names_the_chosen_endpoint_without_its_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``auto`` logs which endpoint it chose; a log is shipped and read far from the server."""
    config = Config(
        path=str(tmp_path / "m.db"),
        embedder="auto",
        skip_ollama_probe=True,
        openai_base_url=f"http://svc:{SECRET}@127.0.0.1:9/v1",
        embedder_dimension=64,
    )
    with caplog.at_level(logging.DEBUG, logger="attestor_arango"):
        make_embedder(config)

    logged = "\n".join(record.getMessage() for record in caplog.records)
    _clean(logged)


def test_an_error_quoting_a_long_caller_text_is_made_in_one_pass(tmp_path: Path) -> None:
    """Errors quote what a caller sent (a malformed namespace whole): the redaction reads
    such a text once. A first version's pattern backtracked over every dot-separated run:
    2.4 s for 32,000 characters of "a.a.a...@", growing with the square of the length,
    so one 1 MiB request body held a worker for most of an hour."""
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    client = TestClient(create_app(mem, acme_ring()), raise_server_exceptions=False)
    hostile = "a." * 200_000 + "@" + ":// " * 50_000 + "@"

    answer = client.post("/v1/memories/list", json={"namespace": hostile}, headers=AUTH)

    assert answer.status_code == 422, answer.text[:200]
    assert without_credentials("x http://u:p@h y") == "x http://***@h y"
    mem.close()


def test_urls_following_each_other_are_each_cleaned() -> None:
    text = "a://b://c@d and http://u@h http://v:w@i/x@y ://@"
    assert without_credentials(text) == "a://b://***@d and http://***@h http://***@i/x@y ://***@"
