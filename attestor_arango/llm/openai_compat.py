"""Any OpenAI-compatible chat-completions endpoint, over httpx.

Works with OpenAI itself and with the many servers that copy its API
(vLLM, llama.cpp server, LM Studio, LiteLLM...).
"""

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


class OpenAICompatProvider:
    """POSTs to ``{base_url}/chat/completions``; ``base_url`` usually ends in ``/v1``."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not model:
            raise ValidationError("an LLM model name is required, e.g. llm: {model: gpt-4o-mini}")
        if not base_url.startswith(("http://", "https://")):
            raise ValidationError(
                f"llm base_url {base_url!r} must start with http:// or https://",
            )
        if timeout <= 0:
            raise ValidationError("the LLM timeout must be a positive number of seconds")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def complete(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        system: str | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> str:
        messages = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        url = f"{self.base_url}/chat/completions"

        def once() -> str:
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException as exc:
                raise LLMTimeoutError(
                    f"{url} gave no answer within {self.timeout}s; raise llm.timeout",
                ) from exc
            except httpx.TransportError as exc:
                raise LLMUnavailableError(f"cannot reach {url}: {exc}") from exc
            if response.status_code == 429 or response.status_code >= 500:
                raise LLMUnavailableError(
                    f"{url} answered {response.status_code}: {response.text[:200]}",
                    retry_after=_retry_after(response.headers.get("Retry-After")),
                )
            if response.status_code >= 400:
                raise LLMError(
                    f"{url} refused the request ({response.status_code}): "
                    f"{response.text[:200]}; check the model name and API key",
                )
            try:
                payload = response.json()
                content = payload["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
                raise LLMError(
                    f"{url} answered 200 without choices[0].message.content",
                ) from exc
            if not isinstance(content, str):
                raise LLMError(f"{url} answered a non-text message content")
            return content

        return with_retries(once, self.retry, sleep=self._sleep)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds (HTTP dates are ignored)."""
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None
