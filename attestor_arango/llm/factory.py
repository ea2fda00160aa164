"""Builds the configured LLM provider from ``Config.llm`` (or none)."""

from __future__ import annotations

from typing import Any

from attestor_arango.errors import ValidationError
from attestor_arango.llm.base import LLMProvider, RetryPolicy

_KNOWN = {
    "provider",
    "model",
    "base_url",
    "api_key",
    "timeout",
    "retries",
    "backoff",
    "consolidation_model",
}


def provider_from_settings(
    settings: dict[str, Any] | None, *, model_key: str = "model"
) -> LLMProvider | None:
    """``llm: {provider: ollama|openai|none, model, base_url, api_key, timeout, retries}``.

    No provider (or ``none``) returns None: ingest then runs rule-based.
    ``model_key="consolidation_model"`` picks the stronger model for
    consolidation when one is configured.
    """
    settings = dict(settings or {})
    unknown = sorted(set(settings) - _KNOWN)
    if unknown:
        raise ValidationError(f"unknown llm settings {unknown}; known ones: {sorted(_KNOWN)}")
    kind = str(settings.get("provider") or "none").lower()
    if kind == "none":
        return None
    model = str(settings.get(model_key) or settings.get("model") or "")
    timeout = float(settings.get("timeout", 60.0))
    retry = RetryPolicy(
        attempts=int(settings.get("retries", 3)), base_delay=float(settings.get("backoff", 0.5))
    )
    if kind == "ollama":
        from attestor_arango.llm.ollama import OllamaProvider  # httpx only when asked for

        return OllamaProvider(
            model,
            host=str(settings.get("base_url") or "http://127.0.0.1:11434"),
            timeout=timeout,
            retry=retry,
        )
    if kind in {"openai", "openai-compatible"}:
        base_url = settings.get("base_url")
        if not base_url:
            raise ValidationError("llm.base_url is required for an OpenAI-compatible provider")
        key = settings.get("api_key")
        secret = None if key is None else getattr(key, "get_secret_value", lambda: key)()
        from attestor_arango.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            model, base_url=str(base_url), api_key=secret, timeout=timeout, retry=retry
        )
    raise ValidationError(f"unknown llm provider {kind!r}; use ollama, openai or none")
