"""LLM providers against a real HTTP server on 127.0.0.1, and the scripted provider."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from attestor_arango.errors import ValidationError
from attestor_arango.llm import (
    LLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    OllamaProvider,
    OpenAICompatProvider,
    RetryPolicy,
    provider_from_settings,
    render,
)
from tests.support.scripted_llm import RecordingProvider, ScriptedProvider


class FakeEndpoint:
    """A real HTTP server; each request pops the next (status, body, delay) plan."""

    def __init__(self) -> None:
        self.plans: list[tuple[int, Any, float]] = []
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                endpoint.requests.append(
                    {"path": self.path, "body": body, "headers": dict(self.headers)}
                )
                status, payload, delay = endpoint.plans.pop(0) if endpoint.plans else (500, {}, 0)
                if delay:
                    time.sleep(delay)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    if status == 429:
                        self.send_header("Retry-After", "3")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    ep = FakeEndpoint()
    yield ep
    ep.close()


def chat(content: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


def ollama_answer(text: str) -> dict[str, Any]:
    return {"model": "tiny", "created_at": "2026-01-01T00:00:00Z", "response": text, "done": True}


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# --- OpenAI-compatible ----------------------------------------------------------------


def test_openai_sends_temperature_zero_and_returns_content(endpoint: FakeEndpoint) -> None:
    endpoint.plans.append((200, chat('{"facts": []}'), 0))
    llm = OpenAICompatProvider("tiny", base_url=endpoint.url + "/v1", api_key="k-123")
    assert llm.complete("hello", system="be terse", json_mode=True) == '{"facts": []}'
    req = endpoint.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["temperature"] == 0
    assert req["body"]["model"] == "tiny"
    assert req["body"]["messages"][0] == {"role": "system", "content": "be terse"}
    assert req["body"]["messages"][1] == {"role": "user", "content": "hello"}
    assert req["body"]["response_format"] == {"type": "json_object"}
    assert req["headers"]["Authorization"] == "Bearer k-123"


def test_openai_retries_server_errors_with_backoff(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(503, {"error": "busy"}, 0), (500, {}, 0), (200, chat("ok"), 0)]
    sleeps = Sleeps()
    llm = OpenAICompatProvider(
        "tiny",
        base_url=endpoint.url,
        retry=RetryPolicy(attempts=3, base_delay=0.25, multiplier=2),
        sleep=sleeps,
    )
    assert llm.complete("x") == "ok"
    assert len(endpoint.requests) == 3
    assert sleeps == [0.25, 0.5]


def test_openai_honours_retry_after_within_the_cap(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(429, {"error": "slow down"}, 0), (200, chat("ok"), 0)]
    sleeps = Sleeps()
    llm = OpenAICompatProvider(
        "tiny", base_url=endpoint.url, retry=RetryPolicy(attempts=2, max_delay=8), sleep=sleeps
    )
    assert llm.complete("x") == "ok"
    assert sleeps == [3.0]


def test_openai_timeout_raises_typed_error_after_all_attempts(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(200, chat("late"), 0.6), (200, chat("late"), 0.6)]
    sleeps = Sleeps()
    llm = OpenAICompatProvider(
        "tiny", base_url=endpoint.url, timeout=0.15, retry=RetryPolicy(attempts=2), sleep=sleeps
    )
    with pytest.raises(LLMTimeoutError) as info:
        llm.complete("x")
    assert info.value.details["attempts"] == 2
    assert len(sleeps) == 1


def test_openai_client_error_is_not_retried(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(401, {"error": "bad key"}, 0), (200, chat("never"), 0)]
    llm = OpenAICompatProvider("tiny", base_url=endpoint.url, sleep=Sleeps())
    with pytest.raises(LLMError) as info:
        llm.complete("x")
    assert not isinstance(info.value, LLMUnavailableError)
    assert len(endpoint.requests) == 1


def test_openai_malformed_body_is_an_llm_error(endpoint: FakeEndpoint) -> None:
    endpoint.plans.append((200, {"nothing": True}, 0))
    llm = OpenAICompatProvider("tiny", base_url=endpoint.url, sleep=Sleeps())
    with pytest.raises(LLMError, match="choices"):
        llm.complete("x")


def test_openai_unreachable_is_unavailable() -> None:
    llm = OpenAICompatProvider(
        "tiny", base_url="http://127.0.0.1:9", retry=RetryPolicy(attempts=2), sleep=Sleeps()
    )
    with pytest.raises(LLMUnavailableError):
        llm.complete("x")


def test_openai_rejects_bad_settings() -> None:
    with pytest.raises(ValidationError):
        OpenAICompatProvider("tiny", base_url="ftp://x")
    with pytest.raises(ValidationError):
        OpenAICompatProvider("", base_url="http://127.0.0.1:1")
    with pytest.raises(ValidationError):
        OpenAICompatProvider("tiny", base_url="http://127.0.0.1:1", timeout=0)


# --- Ollama --------------------------------------------------------------------------------


def test_ollama_generate_with_temperature_zero(endpoint: FakeEndpoint) -> None:
    endpoint.plans.append((200, ollama_answer('{"action": "ADD"}'), 0))
    llm = OllamaProvider("tiny", host=endpoint.url)
    assert llm.complete("decide", json_mode=True, max_tokens=64) == '{"action": "ADD"}'
    req = endpoint.requests[0]
    assert req["path"] == "/api/generate"
    assert req["body"]["model"] == "tiny"
    assert req["body"]["prompt"] == "decide"
    assert req["body"]["options"]["temperature"] == 0
    assert req["body"]["options"]["num_predict"] == 64
    assert req["body"]["format"] == "json"
    assert req["body"]["stream"] is False


def test_ollama_timeout_then_success(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(200, ollama_answer("late"), 0.6), (200, ollama_answer("fresh"), 0)]
    sleeps = Sleeps()
    llm = OllamaProvider(
        "tiny", host=endpoint.url, timeout=0.15, retry=RetryPolicy(attempts=2), sleep=sleeps
    )
    assert llm.complete("x") == "fresh"
    assert sleeps == [0.5]


def test_ollama_missing_model_is_not_retried(endpoint: FakeEndpoint) -> None:
    endpoint.plans += [(404, {"error": "model 'tiny' not found"}, 0), (200, ollama_answer("x"), 0)]
    llm = OllamaProvider("tiny", host=endpoint.url, sleep=Sleeps())
    with pytest.raises(LLMError, match="pulled"):
        llm.complete("x")
    assert len(endpoint.requests) == 1


def test_ollama_unreachable_is_unavailable() -> None:
    llm = OllamaProvider(
        "tiny", host="http://127.0.0.1:9", retry=RetryPolicy(attempts=1), sleep=Sleeps()
    )
    with pytest.raises(LLMUnavailableError):
        llm.complete("x")


# --- scripted, recording, retry policy, factory, prompts -----------------------------------


def test_scripted_replays_in_order_and_keeps_prompts() -> None:
    llm = ScriptedProvider(["one", {"response": "two", "expect": "second"}])
    assert llm.complete("first") == "one"
    assert llm.complete("the second prompt", temperature=0.0) == "two"
    assert [c["prompt"] for c in llm.calls] == ["first", "the second prompt"]
    with pytest.raises(LLMError, match="exhausted"):
        llm.complete("third")


def test_scripted_expect_mismatch_fails_loudly() -> None:
    llm = ScriptedProvider([{"response": "x", "expect": "resolve"}])
    with pytest.raises(LLMError, match="re-record"):
        llm.complete("extract")


def test_scripted_timeout_honours_retry_policy() -> None:
    sleeps = Sleeps()
    llm = ScriptedProvider(
        [{"error": "timeout"}, "after retry"], retry=RetryPolicy(attempts=2), sleep=sleeps
    )
    assert llm.complete("x") == "after retry"
    assert sleeps == [0.5]
    only_timeouts = ScriptedProvider([{"error": "timeout"}])
    with pytest.raises(LLMTimeoutError):
        only_timeouts.complete("x")


def test_scripted_rejects_malformed_scripts(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        ScriptedProvider([{"error": "explode"}])
    with pytest.raises(ValidationError):
        ScriptedProvider([42])  # type: ignore[list-item]
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValidationError):
        ScriptedProvider.from_file(bad)


def test_recording_round_trips_through_a_script_file(tmp_path: Path) -> None:
    live = RecordingProvider(ScriptedProvider(["alpha", {"error": "timeout"}]))
    assert live.complete("p1") == "alpha"
    with pytest.raises(LLMTimeoutError):
        live.complete("p2")
    path = tmp_path / "script.json"
    live.save(path)
    replay = ScriptedProvider.from_file(path)
    assert replay.complete("p1") == "alpha"
    with pytest.raises(LLMTimeoutError):
        replay.complete("p2")


def test_retry_policy_caps_delay_and_validates() -> None:
    policy = RetryPolicy(attempts=5, base_delay=1, multiplier=3, max_delay=5)
    assert [policy.delay(n) for n in range(4)] == [1, 3, 5, 5]
    with pytest.raises(ValidationError):
        RetryPolicy(attempts=0)


def test_factory_builds_configured_providers() -> None:
    assert provider_from_settings({}) is None
    assert provider_from_settings({"provider": "none"}) is None
    ol = provider_from_settings({"provider": "ollama", "model": "m", "timeout": 5, "retries": 2})
    assert isinstance(ol, OllamaProvider) and ol.timeout == 5 and ol.retry.attempts == 2
    oa = provider_from_settings(
        {
            "provider": "openai",
            "model": "m",
            "consolidation_model": "big",
            "base_url": "http://x/v1",
        },
        model_key="consolidation_model",
    )
    assert isinstance(oa, OpenAICompatProvider) and oa.model == "big"
    with pytest.raises(ValidationError, match="base_url"):
        provider_from_settings({"provider": "openai", "model": "m"})
    with pytest.raises(ValidationError, match="unknown llm provider"):
        provider_from_settings({"provider": "magic", "model": "m"})
    with pytest.raises(ValidationError, match="unknown llm settings"):
        provider_from_settings({"provider": "ollama", "modle": "m"})


def test_prompts_are_versioned_files() -> None:
    text = render("resolve", 1, fact="I live in Berlin", candidates="(none)")
    assert "I live in Berlin" in text and "ADD" in text and "INVALIDATE" in text
    with pytest.raises(ValidationError, match="needs a value"):
        render("resolve", 1, fact="x")
    with pytest.raises(ValidationError, match="no prompt file"):
        render("resolve", 99, fact="x", candidates="y")
