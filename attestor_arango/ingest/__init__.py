"""Conversation ingest: episodes, speaker-locked extraction, the four-decision resolver."""

from typing import TYPE_CHECKING

from attestor_arango.lazy import lazy_exports

if TYPE_CHECKING:
    from attestor_arango.ingest.extract import LLMExtractor, RuleExtractor
    from attestor_arango.ingest.model import Action, Decision, Fact, IngestResult, Turn
    from attestor_arango.ingest.pipeline import Backends, backends_for, ingest_round
    from attestor_arango.ingest.resolve import LLMResolver, RuleResolver, parse_decision

__getattr__ = lazy_exports(
    __name__,
    {
        "Action": "attestor_arango.ingest.model",
        "Backends": "attestor_arango.ingest.pipeline",
        "Decision": "attestor_arango.ingest.model",
        "Fact": "attestor_arango.ingest.model",
        "IngestResult": "attestor_arango.ingest.model",
        "LLMExtractor": "attestor_arango.ingest.extract",
        "LLMResolver": "attestor_arango.ingest.resolve",
        "RuleExtractor": "attestor_arango.ingest.extract",
        "RuleResolver": "attestor_arango.ingest.resolve",
        "Turn": "attestor_arango.ingest.model",
        "backends_for": "attestor_arango.ingest.pipeline",
        "ingest_round": "attestor_arango.ingest.pipeline",
        "parse_decision": "attestor_arango.ingest.resolve",
    },
)

__all__ = [
    "Action",
    "Backends",
    "Decision",
    "Fact",
    "IngestResult",
    "LLMExtractor",
    "LLMResolver",
    "RuleExtractor",
    "RuleResolver",
    "Turn",
    "backends_for",
    "ingest_round",
    "parse_decision",
]
