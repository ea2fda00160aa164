"""Test tooling: the ArangoDB test server, the AQL lints and a scripted LLM."""
