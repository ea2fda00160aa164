"""Session 25 attack: ``mcp --print-config`` printed a password inside a URL.

The entry it prints is pasted into an agent host's config file, Claude Code's ``.mcp.json``
in the project among them (a file often committed with the code); the README promises it
holds "never a key or password", and it leaves out ``ARANGO_PASSWORD`` and the API keys.
A URL setting carrying its credentials (``ARANGO_URL=http://root:pw@db:8529``, an
Ollama or OpenAI-compatible endpoint at ``https://token@host``) was printed whole. The
URL is now printed without its user part, as errors name it; the password stays where
it was set (the entry's host supplies it, as for ``ARANGO_PASSWORD``).
"""

from __future__ import annotations

import argparse
import json

from attestor_arango.interfaces.mcp_config import carried_env, config_document

SECRET = "pwSECRET25"
ENVIRON = {
    "ATTESTOR_TENANT": "acme",
    "ARANGO_URL": f"http://root:{SECRET}@db:8529",
    "ATTESTOR_OLLAMA_URL": f"http://{SECRET}@ollama:11434",
    "ATTESTOR_OPENAI_BASE_URL": f"https://svc:{SECRET}@llm.example/v1",
}


def test_the_printed_entry_names_urls_without_their_credentials() -> None:
    carried = carried_env(argparse.Namespace(), ENVIRON)

    assert carried == {
        "ARANGO_URL": "http://***@db:8529",
        "ATTESTOR_OLLAMA_URL": "http://***@ollama:11434",
        "ATTESTOR_OPENAI_BASE_URL": "https://***@llm.example/v1",
        "ATTESTOR_TENANT": "acme",
    }
    document = config_document(argparse.Namespace(transport="stdio"), ENVIRON)
    assert SECRET not in json.dumps(document)


def test_urls_without_credentials_are_printed_as_set() -> None:
    environ = {"ARANGO_URL": "http://db:8529", "ATTESTOR_OLLAMA_URL": "http://ollama:11434"}
    assert carried_env(argparse.Namespace(), environ) == environ
