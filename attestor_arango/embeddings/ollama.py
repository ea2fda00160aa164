"""Embeddings from a local Ollama server (default model ``bge-m3``, 1024-D).

Ollama is the local-first default of the provider chain: no key, no cloud, a
strong multilingual model. The dimension is not hard-coded per model; it is
taken from the first response, so any embedding model the server has pulled
works. The space name carries the model tag, so switching models is caught by
the store's embedding-space check instead of mixing vectors.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import httpx
import numpy as np

from attestor_arango.embeddings._batching import BatchedRemoteEmbedder, check_batch_size, to_matrix
from attestor_arango.errors import EmbedderUnavailable, EmbeddingMismatchError

if TYPE_CHECKING:
    import ollama

DEFAULT_OLLAMA_MODEL = "bge-m3"
DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"


class OllamaEmbedder(BatchedRemoteEmbedder):
    """Calls Ollama's ``/api/embed`` in batches and returns L2-normalised float32 rows."""

    def __init__(
        self,
        model: str = DEFAULT_OLLAMA_MODEL,
        *,
        base_url: str = DEFAULT_OLLAMA_URL,
        timeout: float = 60.0,
        batch_size: int = 32,
        dimension: int | None = None,
    ) -> None:
        """``dimension``, when given, is the size the server must return (checked, not assumed)."""
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.batch_size = check_batch_size(batch_size)
        # "bge-m3" and "bge-m3:latest" are the same model, so they name the same space
        self.name = f"ollama:{model.removesuffix(':latest')}"
        self._expected = dimension
        self._dimension: int | None = None
        self._lock = threading.Lock()
        # imported here, not at module level: ollama's pydantic models add ~10 ms to every
        # full garbage collection of a process that imports it, used or not
        import ollama

        self._response_error = ollama.ResponseError
        self._client = ollama.Client(host=self.base_url, timeout=timeout)

    def _embed_batch(self, chunk: list[str]) -> np.ndarray:
        try:
            response = self._client.embed(model=self.model, input=chunk)
        except self._response_error as exc:
            raise EmbedderUnavailable(self._explain_status(exc), status=exc.status_code) from exc
        except ConnectionError as exc:
            raise EmbedderUnavailable(
                f"cannot connect to Ollama at {self.base_url}; start it with `ollama serve` "
                "or set ollama_url (ATTESTOR_OLLAMA_URL), or choose another embedder",
                url=self.base_url,
            ) from exc
        except httpx.TimeoutException as exc:
            raise EmbedderUnavailable(
                f"Ollama at {self.base_url} did not answer within {self.timeout}s; "
                "the model may still be loading: retry, or raise the timeout",
                url=self.base_url,
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbedderUnavailable(
                f"HTTP error talking to Ollama at {self.base_url}: {exc}", url=self.base_url
            ) from exc
        except (ValueError, RecursionError) as exc:  # not its JSON (pydantic's error is a
            raise EmbedderUnavailable(  # ValueError), or nested too deeply to read
                f"Ollama at {self.base_url} answered what is not an embedding response "
                f"({type(exc).__name__}); check ollama_url",
                url=self.base_url,
            ) from exc
        matrix = to_matrix(response.embeddings, len(chunk), self._dimension, f"Ollama {self.name}")
        self._remember_dimension(int(matrix.shape[1]))
        return matrix

    def _remember_dimension(self, dim: int) -> None:
        with self._lock:
            if self._expected is not None and dim != self._expected:
                raise EmbeddingMismatchError(
                    f"Ollama model {self.model} returns {dim}-dimensional vectors but "
                    f"embedder_dimension is {self._expected}; fix the configuration",
                    expected=self._expected,
                    got=dim,
                )
            if self._dimension is None:
                self._dimension = dim

    def _explain_status(self, exc: ollama.ResponseError) -> str:
        if exc.status_code == 404:
            return (
                f"Ollama at {self.base_url} has no model {self.model!r}: run "
                f"`ollama pull {self.model}` or set embedder_model to a pulled model"
            )
        return f"Ollama at {self.base_url} refused the embed request: {exc}"

    def close(self) -> None:
        self._client.close()
