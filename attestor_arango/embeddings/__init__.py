"""Embedders: the protocol, the offline fallback and the provider chain."""

from attestor_arango.embeddings.base import Embedder, normalize_rows
from attestor_arango.embeddings.chain import make_embedder
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.embeddings.local import LocalMiniLMEmbedder, local_available
from attestor_arango.embeddings.ollama import OllamaEmbedder
from attestor_arango.embeddings.openai import OpenAICompatEmbedder

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
