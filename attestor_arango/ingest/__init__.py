"""Conversation ingest: episodes, speaker-locked extraction, the four-decision resolver."""

from .extract import LLMExtractor, RuleExtractor
from .model import Action, Decision, Fact, IngestResult, Turn
from .pipeline import Backends, backends_for, ingest_round, use_backends
from .resolve import LLMResolver, RuleResolver, parse_decision

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
    "use_backends",
]
