"""Optional LLM backends for extraction, resolution, consolidation and reflection.

The providers (and httpx behind them) are imported on first use of their name: a
process that never calls an LLM does not load httpx, whose import also loads its
command line (click, rich, pygments): ~21,000 objects every full garbage collection
of a recalling process walked (~40 % of them), and ~0.35 s of a cold start.
"""

from typing import TYPE_CHECKING

from attestor_arango.lazy import lazy_exports
from attestor_arango.llm.answers import json_object_text
from attestor_arango.llm.base import (
    LLMError,
    LLMProvider,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    with_retries,
)
from attestor_arango.llm.factory import provider_from_settings
from attestor_arango.llm.prompts import render

if TYPE_CHECKING:
    from attestor_arango.llm.ollama import OllamaProvider
    from attestor_arango.llm.openai_compat import OpenAICompatProvider

__getattr__ = lazy_exports(
    "attestor_arango.llm",
    {
        "OllamaProvider": "attestor_arango.llm.ollama",
        "OpenAICompatProvider": "attestor_arango.llm.openai_compat",
    },
)

__all__ = [
    "LLMError",
    "LLMProvider",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "OllamaProvider",
    "OpenAICompatProvider",
    "RetryPolicy",
    "json_object_text",
    "provider_from_settings",
    "render",
    "with_retries",
]
