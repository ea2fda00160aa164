"""Ollama provider through the official ``ollama`` client package."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from attestor_arango.errors import ValidationError
from attestor_arango.llm.base import (
    LLMError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    with_retries,
)


class OllamaProvider:
    """Calls ``/api/generate`` on an Ollama server (non-streaming)."""

    name = "ollama"

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise ValidationError("an Ollama model name is required, e.g. llm: {model: qwen2.5:7b}")
        if timeout <= 0:
            raise ValidationError("the LLM timeout must be a positive number of seconds")
        self.model = model
        self.host = host
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        # imported here, not at module level: ollama's pydantic models add ~10 ms to every
        # full garbage collection of a process that imports it, used or not
        import ollama

        self._response_error = ollama.ResponseError
        self._client = ollama.Client(host=host, timeout=timeout)

    def complete(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        system: str | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> str:
        options: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            options["num_predict"] = max_tokens

        def once() -> str:
            try:
                response = self._client.generate(
                    model=self.model,
                    prompt=prompt,
                    system=system or "",
                    options=options,
                    format="json" if json_mode else "",
                    stream=False,
                )
            except httpx.TimeoutException as exc:
                raise LLMTimeoutError(
                    f"Ollama at {self.host} gave no answer within {self.timeout}s; "
                    "raise llm.timeout or use a smaller model",
                ) from exc
            except (ConnectionError, httpx.TransportError) as exc:
                raise LLMUnavailableError(
                    f"cannot reach Ollama at {self.host}: {exc}; start it or fix llm.base_url",
                ) from exc
            except self._response_error as exc:
                if exc.status_code >= 500 or exc.status_code == 429:
                    raise LLMUnavailableError(
                        f"Ollama at {self.host} answered {exc.status_code}: {exc.error}",
                    ) from exc
                raise LLMError(
                    f"Ollama refused the request ({exc.status_code}): {exc.error}; "
                    f"check that model {self.model!r} is pulled",
                ) from exc
            except (ValueError, RecursionError) as exc:  # not its JSON (pydantic's error is
                raise LLMError(  # a ValueError), or nested too deeply to read
                    f"Ollama at {self.host} answered what is not a generate response "
                    f"({type(exc).__name__}); check llm.base_url",
                ) from exc
            text = response.response
            if not isinstance(text, str):
                raise LLMError("Ollama answered without a response text")
            return text

        return with_retries(once, self.retry, sleep=self._sleep)
