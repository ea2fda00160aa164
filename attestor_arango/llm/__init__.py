"""Optional LLM backends for extraction, resolution, consolidation and reflection."""

from .base import (
    LLMError,
    LLMProvider,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    with_retries,
)
from .factory import provider_from_settings
from .ollama import OllamaProvider
from .openai_compat import OpenAICompatProvider
from .prompts import render
from .scripted import RecordingProvider, ScriptedProvider

__all__ = [
    "LLMError",
    "LLMProvider",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "OllamaProvider",
    "OpenAICompatProvider",
    "RecordingProvider",
    "RetryPolicy",
    "ScriptedProvider",
    "provider_from_settings",
    "render",
    "with_retries",
]
