"""Conversation ingest: episodes, speaker-locked extraction, the four-decision resolver."""

from attestor_arango.ingest.extract import LLMExtractor, RuleExtractor
from attestor_arango.ingest.model import Action, Decision, Fact, IngestResult, Turn
from attestor_arango.ingest.pipeline import Backends, backends_for, ingest_round
from attestor_arango.ingest.resolve import LLMResolver, RuleResolver, parse_decision

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
