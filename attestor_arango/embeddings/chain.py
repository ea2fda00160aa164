"""Choosing the embedder from the configuration: explicit choice, or ``auto``.

``auto`` prefers quality that costs nothing and leaves the machine only when
asked: a local Ollama that already has the model pulled, then an
OpenAI-compatible endpoint the user configured, then the in-process MiniLM
that the plain install ships (the usual outcome), and only if that cannot load,
the model-free hashing embedder, marked as a fallback (``fallback_reason``) so
that ``doctor`` and every recall say so. An explicit
choice never falls back silently: if it cannot work, the caller gets an
:class:`EmbedderUnavailable` that says how to fix it, because a silent switch
would put the tenant's vectors into another space.
"""

from __future__ import annotations

import logging

import httpx

from attestor_arango.config import Config
from attestor_arango.embeddings.base import Embedder
from attestor_arango.embeddings.base import fallback_reason as fallback_reason  # re-export
from attestor_arango.embeddings.hashing import HashingEmbedder
from attestor_arango.embeddings.local import LocalMiniLMEmbedder
from attestor_arango.embeddings.ollama import DEFAULT_OLLAMA_MODEL, OllamaEmbedder
from attestor_arango.embeddings.openai import DEFAULT_OPENAI_MODEL, OpenAICompatEmbedder
from attestor_arango.errors import EmbedderUnavailable, without_credentials

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 0.5


def ollama_has_model(base_url: str, model: str, timeout: float | None = None) -> bool | None:
    """Ask Ollama's ``/api/tags`` whether ``model`` is pulled.

    None: no server answered in time. False: a server answered but lacks the
    model (or is not Ollama). True: ready to embed.
    """
    wait = PROBE_TIMEOUT_S if timeout is None else timeout
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/api/tags", timeout=wait)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return False
    try:
        models = response.json().get("models", [])
        names = {str(m.get("name", "")) for m in models} | {str(m.get("model", "")) for m in models}
    except (ValueError, AttributeError, RecursionError):
        return False
    wanted = {model} if ":" in model else {model, f"{model}:latest"}
    return bool(names & wanted)


def _ollama(config: Config) -> OllamaEmbedder:
    return OllamaEmbedder(
        config.embedder_model or DEFAULT_OLLAMA_MODEL,
        base_url=config.ollama_url,
        dimension=config.embedder_dimension,
    )


#: the endpoint an explicit ``openai`` choice uses when only an API key is configured
#: (Attestor's ``ATTESTOR_EMBEDDING_PROVIDER=openai`` + ``OPENAI_API_KEY``).
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _openai(config: Config) -> OpenAICompatEmbedder:
    base_url = config.openai_base_url
    if not base_url and config.openai_api_key:
        base_url = OPENAI_DEFAULT_BASE_URL
    if not base_url:
        raise EmbedderUnavailable(
            "embedder 'openai' needs openai_base_url (ATTESTOR_OPENAI_BASE_URL), "
            "e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1, or an API key "
            "(OPENAI_API_KEY) for api.openai.com"
        )
    key = config.openai_api_key.get_secret_value() if config.openai_api_key else None
    return OpenAICompatEmbedder(
        base_url,
        model=config.embedder_model or DEFAULT_OPENAI_MODEL,
        api_key=key,
        dimension=config.embedder_dimension,
    )


def _local(config: Config) -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder(config.local_model_path)


def _hashing(config: Config) -> HashingEmbedder:
    return HashingEmbedder(config.embedder_dimension or 384)


def _explicit_ollama(config: Config) -> OllamaEmbedder:
    model = config.embedder_model or DEFAULT_OLLAMA_MODEL
    state = ollama_has_model(config.ollama_url, model, timeout=2.0)
    if state is None:
        raise EmbedderUnavailable(
            f"embedder 'ollama' chosen but no Ollama answers at {config.ollama_url}; "
            "start it with `ollama serve`, set ollama_url (ATTESTOR_OLLAMA_URL), "
            "or choose another embedder",
            url=config.ollama_url,
        )
    if state is False:
        raise EmbedderUnavailable(
            f"Ollama at {config.ollama_url} does not have model {model!r}; "
            f"run `ollama pull {model}` or set embedder_model",
            url=config.ollama_url,
            model=model,
        )
    return _ollama(config)


def make_embedder(config: Config) -> Embedder:
    """The embedder ``config.embedder`` asks for; see the module docstring for ``auto``."""
    choice = config.embedder
    if choice == "hashing":
        return _hashing(config)
    if choice == "ollama":
        return _explicit_ollama(config)
    if choice == "openai":
        return _openai(config)
    if choice == "local":
        return _local(config)
    return _auto(config)


def _auto(config: Config) -> Embedder:
    if not config.skip_ollama_probe:
        model = config.embedder_model or DEFAULT_OLLAMA_MODEL
        state = ollama_has_model(config.ollama_url, model)
        if state:
            shown = without_credentials(config.ollama_url)
            log.info("embedder auto: Ollama %s at %s", model, shown)
            return _ollama(config)
        if state is False:
            log.info("embedder auto: Ollama answers but lacks %s; trying the next provider", model)
    if config.openai_base_url:
        shown = without_credentials(config.openai_base_url)  # a log travels far from here
        log.info("embedder auto: OpenAI-compatible endpoint %s", shown)
        return _openai(config)
    try:
        return _local(config)
    except EmbedderUnavailable as exc:
        reason = (
            f"no semantic embedding model could be loaded ({exc.message}); recall is "
            "running on the hashing fallback, which knows no synonyms"
        )
    log.warning("embedder auto: %s", reason)
    return HashingEmbedder(config.embedder_dimension or 384, fallback_reason=reason)
