"""What ingest reads (a Turn), finds (Facts), decides (Decisions) and returns.

A Fact keeps the speaker's own words and the time expression as spoken; the
resolved bounds sit beside it, anchored on the turn's own timestamp. A
Decision always names the episode that is its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from attestor_arango.clock import OPEN, from_us, parse_time
from attestor_arango.errors import ValidationError
from attestor_arango.ingest.timeexpr import TimeSpan
from attestor_arango.models import Episode, Memory, content_digest
from attestor_arango.validation import check_label, check_metadata, check_text, model_problems

Speaker = Literal["user", "assistant"]
MAX_TURN_CHARS = 64_000


class Turn(BaseModel):
    """One conversation round: what the user said and what the assistant answered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str = ""
    assistant: str = ""
    timestamp: datetime | None = None  # when the user spoke; None = now
    assistant_timestamp: datetime | None = None
    session_id: str | None = None
    user_name: str | None = None  # the entity user facts are about; default "user"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timestamp", "assistant_timestamp", mode="before")
    @classmethod
    def _time(cls, value: object) -> datetime | None:
        if value is None:
            return None
        return from_us(parse_time(value, field="timestamp"))  # type: ignore[arg-type]

    @field_validator("user_name")
    @classmethod
    def _user_name(cls, value: str | None) -> str | None:
        """The entity the user's facts are about: a label, as ``add``'s entity."""
        label = check_label(value, "user_name")
        return None if label is None else check_text(label, "user_name")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(value)

    @field_validator("user", "assistant")
    @classmethod
    def _text(cls, value: str) -> str:
        if len(value) > MAX_TURN_CHARS:
            raise ValueError(f"a turn side may hold at most {MAX_TURN_CHARS} characters")
        if "\x00" in value:
            raise ValueError("turn text contains a NUL character")
        return check_text(value, "turn text")  # a lone surrogate: no UTF-8 store holds it

    @classmethod
    def parse(cls, raw: Turn | dict[str, Any]) -> Turn:
        """A Turn from itself or a mapping; bad input raises ValidationError."""
        if isinstance(raw, Turn):
            turn = raw
        elif isinstance(raw, dict):
            try:
                turn = cls.model_validate(raw)
            except Exception as exc:  # pydantic's error lists every bad field
                raise ValidationError(f"invalid turn: {model_problems(exc)}") from exc
        else:
            raise ValidationError("turn must be a Turn or a mapping with user/assistant text")
        if not turn.user.strip() and not turn.assistant.strip():
            raise ValidationError("the turn is empty; pass user and/or assistant text")
        return turn

    @property
    def subject(self) -> str:
        return (self.user_name or "user").strip() or "user"


@dataclass(frozen=True, slots=True)
class Fact:
    """One extracted assertion, locked to the speaker who made it."""

    text: str
    speaker: Speaker
    subject: str
    attribute: str | None = None  # e.g. "location", "likes:sushi", "num:have:cat"
    value: str | None = None
    single_valued: bool = False
    negated: bool = False
    time: TimeSpan | None = None
    entities: tuple[str, ...] = ()
    relations: tuple[tuple[str, str, str], ...] = ()  # (source, relation, target)
    replaces: str | None = None  # an old value the sentence names ("from X to Y")
    valid_from: int = 0
    valid_until: int = OPEN
    # whose fact it is when that is the user rather than the subject ("my gym is X" is the
    # user's fact about their gym); the memory's entity, so every statement a person makes
    # about their own life shares one entity. An assistant sentence gets the user as owner
    # only when it reports a change to the user's things ("your flight is now in business")
    owner: str | None = None

    @property
    def entity(self) -> str:
        """The entity the fact's memory is stored under: its owner, else its subject."""
        return self.owner or self.subject

    @property
    def category(self) -> str | None:
        return None if self.attribute is None else self.attribute.split(":", 1)[0]

    def describe(self) -> dict[str, Any]:
        """The structured reading, kept in the memory's metadata for later resolution."""
        out: dict[str, Any] = {
            "speaker": self.speaker,
            "subject": self.subject,
            "attribute": self.attribute,
            "value": self.value,
            "single_valued": self.single_valued,
            "negated": self.negated,
        }
        if self.owner is not None:
            out["owner"] = self.owner
        if self.time is not None:
            out["time_expression"] = self.time.expression
            out["time_precision"] = self.time.precision
            out["time_mode"] = self.time.mode
        return out


class Action(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    INVALIDATE = "INVALIDATE"
    NOOP = "NOOP"


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    fact: Fact
    evidence_episode_id: str
    target_id: str | None = None
    reason: str = ""
    decided_by: str = "rules"  # rules | llm | fallback

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "text": self.fact.text,
            "speaker": self.fact.speaker,
            "target_id": self.target_id,
            "evidence_episode_id": self.evidence_episode_id,
            "reason": self.reason,
            "decided_by": self.decided_by,
        }

    def audit_dict(self, salt: str | None) -> dict[str, Any]:
        """The decision as the audit chain keeps it: ids, action and the fact's digest, no text.

        The digest is keyed by ``salt``, the salt of the memory the decision wrote (or, for a
        NOOP, of the memory that already said it), so it goes with that row's erasure; with
        no salted row to key it (an old row) the digest is left out, never kept plain."""
        return {
            "action": self.action.value,
            "fact_digest": None if salt is None else content_digest(self.fact.text, salt),
            "speaker": self.fact.speaker,
            "target_id": self.target_id,
            "evidence_episode_id": self.evidence_episode_id,
            "decided_by": self.decided_by,
        }


@dataclass(frozen=True)
class IngestResult:
    """The episode, every decision with its evidence, and the memories written."""

    episode: Episode
    decisions: tuple[Decision, ...]
    memories: tuple[Memory, ...]  # written by ADD / UPDATE / INVALIDATE, in order
    warnings: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    # the round verbatim as a memory recall finds (ingest/verbatim.py); None when the
    # round's facts already say all of it
    verbatim: Memory | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode.id,
            "verbatim_id": None if self.verbatim is None else self.verbatim.id,
            "decisions": [d.to_dict() for d in self.decisions],
            "memory_ids": [m.id for m in self.memories],
            "warnings": list(self.warnings),
            "counts": dict(self.counts),
        }
