"""Embedders: the protocol, the offline fallback and the provider chain."""

from .base import Embedder, normalize_rows
from .hashing import HashingEmbedder

__all__ = ["Embedder", "HashingEmbedder", "normalize_rows"]
