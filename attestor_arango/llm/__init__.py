"""Optional LLM backends for extraction, resolution, consolidation and reflection."""

from attestor_arango.llm.base import (
    LLMError,
    LLMProvider,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    with_retries,
)
from attestor_arango.llm.factory import provider_from_settings
from attestor_arango.llm.ollama import OllamaProvider
from attestor_arango.llm.openai_compat import OpenAICompatProvider
from attestor_arango.llm.prompts import render

__all__ = [
    "LLMError",
    "LLMProvider",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "OllamaProvider",
    "OpenAICompatProvider",
    "RetryPolicy",
    "provider_from_settings",
    "render",
    "with_retries",
]
