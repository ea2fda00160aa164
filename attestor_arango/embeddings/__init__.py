"""Embedders: the protocol, the offline fallback and the provider chain.

The providers (and httpx, onnxruntime, tokenizers behind them) are imported on first
use of their name, so importing the library, or a CLI command that never embeds, does
not pay for them (~0.4 s of a cold CLI call was httpx alone).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from attestor_arango.embeddings.base import Embedder, normalize_rows
from attestor_arango.embeddings.hashing import HashingEmbedder

if TYPE_CHECKING:
    from attestor_arango.embeddings.chain import make_embedder
    from attestor_arango.embeddings.local import LocalMiniLMEmbedder, local_available
    from attestor_arango.embeddings.ollama import OllamaEmbedder
    from attestor_arango.embeddings.openai import OpenAICompatEmbedder

_LAZY = {
    "make_embedder": "attestor_arango.embeddings.chain",
    "LocalMiniLMEmbedder": "attestor_arango.embeddings.local",
    "local_available": "attestor_arango.embeddings.local",
    "OllamaEmbedder": "attestor_arango.embeddings.ollama",
    "OpenAICompatEmbedder": "attestor_arango.embeddings.openai",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'attestor_arango.embeddings' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "Embedder",
    "HashingEmbedder",
    "LocalMiniLMEmbedder",
    "OllamaEmbedder",
    "OpenAICompatEmbedder",
    "local_available",
    "make_embedder",
    "normalize_rows",
]
