"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint, over httpx.

OpenAI itself, vLLM, LM Studio, llama.cpp's server, TEI and most gateways speak
this shape, so one small client covers them without the ``openai`` SDK.
Transient failures (timeouts, dropped connections, 429 and 5xx) are retried with
exponential backoff; other 4xx answers are configuration mistakes and fail at
once with a message that names the setting to fix.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np

from attestor_arango.embeddings._batching import BatchedRemoteEmbedder, check_batch_size, to_matrix
from attestor_arango.errors import EmbedderUnavailable, EmbeddingMismatchError

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
_MAX_BACKOFF_S = 30.0


class _Retryable(Exception):
    """A failure worth another try; carries the message and any server-requested wait."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAICompatEmbedder(BatchedRemoteEmbedder):
    """POSTs ``{"model", "input": [...]}`` to ``{base_url}/embeddings`` in batches.

    ``base_url`` includes the API version, as in the OpenAI SDK
    (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1``).
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str = DEFAULT_OPENAI_MODEL,
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        dimension: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``dimension`` is sent as ``dimensions`` (for models that can shorten) and checked.

        ``sleep`` is injectable so tests of the backoff do not wait for real.
        """
        if not base_url:
            raise EmbedderUnavailable(
                "the OpenAI-compatible embedder needs openai_base_url "
                "(ATTESTOR_OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1"
            )
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.batch_size = check_batch_size(batch_size)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.name = f"openai:{model}" + (f"@{dimension}" if dimension else "")
        self._expected = dimension
        self._dimension: int | None = None
        self._sleep = sleep
        self._lock = threading.Lock()
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(base_url=self.base_url, timeout=timeout, headers=headers)

    def _embed_batch(self, chunk: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": chunk, "encoding_format": "float"}
        if self._expected:
            payload["dimensions"] = self._expected
        body = self._post_with_retries(payload)
        rows = self._rows_from(body)
        matrix = to_matrix(rows, len(chunk), self._dimension, f"{self.base_url}/embeddings")
        self._remember_dimension(int(matrix.shape[1]))
        return matrix

    def _post_with_retries(self, payload: dict[str, Any]) -> Any:
        last = ""
        wait_hint: float | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                backoff = self.backoff_s * 2 ** (attempt - 1)
                self._sleep(min(max(backoff, wait_hint or 0.0), _MAX_BACKOFF_S))
            try:
                return self._post_once(payload)
            except _Retryable as exc:
                last, wait_hint = str(exc), exc.retry_after
        raise EmbedderUnavailable(
            f"{self.base_url}/embeddings failed {self.max_retries + 1} times, last: {last}; "
            "check that the server is up and not overloaded, or raise the timeout",
            url=self.base_url,
        )

    def _post_once(self, payload: dict[str, Any]) -> Any:
        try:
            response = self._client.post("/embeddings", json=payload)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timed out after {self.timeout}s ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"connection failed: {exc}") from exc
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}: {_error_text(response)}", _retry_after(response))
        if status >= 400:
            raise EmbedderUnavailable(self._explain_4xx(response), status=status)
        try:
            return response.json()
        except (ValueError, RecursionError) as exc:  # not JSON, or nested too deeply
            raise EmbedderUnavailable(
                f"{self.base_url}/embeddings answered {status} with a body that is not JSON; "
                "is openai_base_url pointing at an OpenAI-compatible API (ending in /v1)?"
            ) from exc

    def _explain_4xx(self, response: httpx.Response) -> str:
        status = response.status_code
        detail = _error_text(response)
        where = f"{self.base_url}/embeddings"
        if status in (401, 403):
            return (
                f"{where} rejected the credentials (HTTP {status}: {detail}); "
                "set openai_api_key (ATTESTOR_OPENAI_API_KEY) to a valid key"
            )
        if status == 404:
            return (
                f"{where} answered 404 ({detail}); check openai_base_url (it should end in "
                f"the API version, e.g. /v1) and that model {self.model!r} exists there"
            )
        return f"{where} refused the request (HTTP {status}: {detail}); check embedder_model"

    def _rows_from(self, body: Any) -> list[list[float]]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbedderUnavailable(
                f"{self.base_url}/embeddings answered without a 'data' list; "
                "the endpoint does not speak the OpenAI embeddings format"
            )
        try:
            ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
            return [list(item["embedding"]) for item in ordered]
        except (TypeError, KeyError, AttributeError) as exc:
            raise EmbedderUnavailable(
                f"{self.base_url}/embeddings returned malformed items ({exc}); "
                "expected objects with 'index' and a float 'embedding'"
            ) from exc

    def _remember_dimension(self, dim: int) -> None:
        with self._lock:
            if self._expected is not None and dim != self._expected:
                raise EmbeddingMismatchError(
                    f"{self.base_url} model {self.model} returned {dim}-dimensional vectors "
                    f"but embedder_dimension is {self._expected}; fix the configuration",
                    expected=self._expected,
                    got=dim,
                )
            if self._dimension is None:
                self._dimension = dim

    def close(self) -> None:
        self._client.close()


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a numeric ``Retry-After`` header (rate limiters send it with 429)."""
    raw = response.headers.get("Retry-After")
    try:
        return max(0.0, float(raw)) if raw is not None else None
    except ValueError:
        return None  # an HTTP-date: fall back to our own backoff


def _error_text(response: httpx.Response) -> str:
    """The server's own error message when it sent the usual ``{"error": {...}}`` body."""
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])
        if isinstance(err, str):
            return err
    return str(body)[:200]
