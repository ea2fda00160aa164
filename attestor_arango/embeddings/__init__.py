"""Embedders: the protocol, the offline fallback and the provider chain."""

from .base import Embedder, normalize_rows
from .chain import make_embedder
from .hashing import HashingEmbedder
from .local import LocalMiniLMEmbedder, local_available
from .ollama import OllamaEmbedder
from .openai import OpenAICompatEmbedder

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
