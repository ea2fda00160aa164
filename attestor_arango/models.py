"""Data model: what a memory, an episode and an audit entry are.

Models are frozen: a stored fact is never edited in place, a new version is
written instead. Times are aware UTC datetimes here and integer microseconds in
the stores (see ``clock``); ``None`` for ``valid_until`` / ``t_expired`` means
the interval is still open.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from attestor_arango.clock import OPEN, from_us, to_us
from attestor_arango.memo import Memo

_M = TypeVar("_M", bound=BaseModel)


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """An instance of ``cls`` from values already of its fields' types, unvalidated.

    The read path builds a few hundred frozen models per recall from rows validated
    when written and from plain numbers it computed; pydantic's ``model_construct``
    walks every field's aliases and defaults in Python, which cost as much as
    validating. ``values`` must hold every field, in declaration order, each of the
    type validation would produce (``tests/test_trusted_models.py`` compares the
    result with validated construction): then the instance is the same, field for
    field, as ``cls(**values)``. The slots are set through their descriptors (no
    attribute lookup by name). A caller that builds many of one class takes its
    ``trusted_maker`` once instead.
    """
    make = _MAKERS.get(cls)
    if make is None:
        make = _MAKERS[cls] = trusted_maker(cls)
    return make(values)


def trusted_maker(cls: type[_M]) -> Callable[[dict[str, Any]], _M]:
    """``trusted(cls, values)`` as a function of ``values`` alone, with the class's lookups
    done once: a recall builds two models per returned result (its breakdown and the
    result), ~170 calls, and the row cache one memory per candidate.

    The set of fields given (``model_fields_set``) is, for a frozen model, one set shared
    by every trusted instance of the class: nothing in pydantic changes it in place for a
    frozen model (``model_copy`` copies it before adding the updated names, assignment is
    refused), and a copy each was ~0.3 us and one more object for every young-generation
    collection to walk. A model that is not frozen gets its own copy.
    """
    blank, fields = _blank_for(cls)
    shared = bool(cls.model_config.get("frozen"))

    def make(values: dict[str, Any]) -> _M:
        m: Any = blank()
        m.__dict__ = values
        m.__pydantic_fields_set__ = fields if shared else set(fields)
        m.__pydantic_extra__ = None
        m.__pydantic_private__ = None
        m.__class__ = cls
        return m

    return make


class _Blank(BaseModel):
    """What a trusted model is built as: a model of no fields with ``object``'s attribute
    stores (``BaseModel``'s ``__setattr__`` is Python and refuses a frozen model's). Its four
    slots are set by the interpreter's specialised path, then ``__class__`` assignment makes
    it an instance of its real class (CPython allows it between classes of one layout: every
    ``BaseModel`` subclass adding no ``__slots__``, as ``_blank_for`` checks): what the four
    slot setters made of ``object.__new__(cls)``, for ~40% of their cost (a method-wrapper
    call each, ~700 instructions; ``tests/test_trusted_models.py``)."""

    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__
    __init__ = object.__init__  # ``_Blank()``: ``object.__new__`` without its argument tuples


def _blank_for(cls: type[BaseModel]) -> tuple[type[BaseModel], set[str]]:
    """``(_Blank, cls's field names)``, once ``cls`` is known to take ``_Blank``'s layout;
    a class that does not (its own ``__slots__``, another base layout) raises TypeError."""
    probe: Any = _Blank()
    try:
        probe.__class__ = cls
    except TypeError as exc:
        raise TypeError(f"{cls.__name__} cannot be built as a trusted model: {exc}") from None
    return _Blank, set(cls.model_fields)


def trusted_parts(cls: type[BaseModel]) -> tuple[type[BaseModel], set[str]]:
    """What ``trusted_maker(cls)``'s function does, for a loop that builds many models
    without a Python call each: ``(blank, fields)``, and then ``m = blank()``,
    ``m.__dict__ = values``, ``m.__pydantic_fields_set__ = fields``,
    ``m.__pydantic_extra__ = None``, ``m.__pydantic_private__ = None``, ``m.__class__ = cls``
    is ``trusted(cls, values)`` for a frozen ``cls`` (its one shared field set, as
    ``trusted_maker`` explains)."""
    if not cls.model_config.get("frozen"):
        raise TypeError(f"{cls.__name__} is not frozen: build it with trusted_maker")
    return _blank_for(cls)


def trusted_fieldwise(cls: type[BaseModel]) -> tuple[type[BaseModel], set[str]]:
    """``trusted_parts(cls)`` setting fields one by one: ``m = blank()``, every field set in
    declaration order (``m.name = value``), then the three slots and ``__class__`` as there.
    ``_Blank()`` makes a values array an instance dict is kept in (3.11+) until read as one:
    assigning ``__dict__`` builds a dict of it only to drop it, where set fields fill it and
    the class assignment makes it the dict, in the order set (~2,300 instructions less a
    breakdown). ``blank`` is ``cls``'s own: its instances share one table of its names."""
    blank = _FIELDWISE.get(cls)
    if blank is None:
        for name in trusted_parts(cls)[1]:  # set on the instance, never through a descriptor
            if hasattr(getattr(_Blank, name, None), "__set__"):
                raise TypeError(f"{cls.__name__}.{name} cannot be set on a blank model")
        blank = _FIELDWISE[cls] = type(f"_Blank{cls.__name__}", (_Blank,), {"__module__": __name__})
    return blank, set(cls.model_fields)


_FIELDWISE: dict[type, type[BaseModel]] = {}  # trusted_fieldwise's blank class by class
_MAKERS: dict[type, Callable[[dict[str, Any]], Any]] = {}  # trusted_maker by class


# ``to_us`` of the datetimes memories hold: a recall converts each candidate's times
# several times (the lanes' tie rule, decay, freshness), ~1 us each; a decoded row's
# datetimes are shared by every copy the row cache hands out, so a hit is a dict lookup
# (equal datetimes are the same instant: the same microseconds). Bounded: ~2 MB.
# Modules that read a required time field of many memories (the candidates of a recall)
# call it too: ``us_of(m.t_created)`` is ``m.us("t_created")`` without the attribute
# lookup by name and the open-bound test a required field never needs.
us_of: Memo[datetime, int] = Memo(to_us, 16_384)
# ``known_us(dt)`` is ``us_of(dt)`` for a datetime seen before, else None: the candidates of
# a recall are built from rows read before, ~2 conversions each (``Candidate``)
known_us = us_of.known


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


def content_hash(content: str) -> str:
    """Plain SHA-256 of a memory's content: what dedup compares within a live tenant.

    Kept only on the row itself (and so erased with it); never copied into the audit
    chain, a signature or any other record that outlives the row (``content_digest``)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


KEYED = "hmac1:"  # marks a digest keyed by a row's salt; a bare or "sha256:" digest is plain


def keyed_digest(salt: str, payload: bytes) -> str:
    """``hmac1:<hex>``: HMAC-SHA256 of ``payload`` under a row's salt (hex).

    Confirming a guessed text against it needs the salt, which lives on the row only: once
    the row is erased, no digest of it can be recomputed from a guess (a dictionary attack
    on erased words)."""
    return KEYED + hmac.new(bytes.fromhex(salt), payload, hashlib.sha256).hexdigest()


def content_digest(content: str, salt: str | None) -> str:
    """The digest of a memory's content that records outliving the row commit to (the audit
    chain's row digest, the signed message, an ingest decision): ``hmac1:`` keyed by the
    row's salt; a row written before salts (``salt`` None) keeps the plain SHA-256 hex its
    records were made with, so old chains and signatures still verify."""
    if salt is None:
        return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
    return keyed_digest(salt, content.encode("utf-8", "surrogatepass"))


class Provenance(BaseModel):
    model_config = ConfigDict(frozen=True)

    agent_id: str
    role: str
    session_id: str | None = None
    source_episode_id: str | None = None
    agent_trail: tuple[str, ...] = ()
    parent_agent_id: str | None = None


class Memory(BaseModel):
    """One asserted fact, with both time axes and its provenance."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    namespace: str
    content: str
    entity: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    valid_from: datetime
    valid_until: datetime | None = None
    t_created: datetime
    t_expired: datetime | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    status: MemoryStatus = MemoryStatus.ACTIVE
    provenance: Provenance
    content_hash: str
    signature: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # 32 random bytes (hex) keying every digest of this row that outlives it
    # (``content_digest``); erased with the row. None: a row written before salts existed
    salt: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @property
    def is_active(self) -> bool:
        return self.t_expired is None

    def us(self, name: str) -> int:
        """A time field in microseconds, OPEN for an open bound."""
        value = getattr(self, name)
        return OPEN if value is None else us_of(value)

    def at(self, as_of: int) -> Memory:
        """This row as a reader at ``as_of`` saw it: later closes are masked.

        Closing a row stamps ``t_expired`` and the successor link; before that
        instant the row was active with no successor, and a replay must say so.
        """
        if self.t_expired is None or us_of(self.t_expired) <= as_of:
            return self
        return self.model_copy(
            update={"t_expired": None, "superseded_by": None, "status": MemoryStatus.ACTIVE},
        )


def us_or_none(value: int) -> datetime | None:
    return None if value >= OPEN else from_us(value)


class Episode(BaseModel):
    """A conversation round kept verbatim: the evidence facts point back to."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    namespace: str
    session_id: str | None = None
    agent_id: str
    user_text: str = ""
    assistant_text: str = ""
    user_time: datetime
    assistant_time: datetime | None = None
    t_created: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    # keys the digests of the round's texts that outlive it (the session id its audit entry
    # keeps), as ``Memory.salt`` does; erased with the row. None: stored before salts
    salt: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class AuditEntry(BaseModel):
    """One link of a tenant's hash chain."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    seq: int
    id: str
    ts: datetime
    agent_id: str
    role: str
    action: str
    target: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    prev_hash: str
    hash: str
    # ed25519 over (tenant, seq, hash) by the service's signing key, when signing is on;
    # not covered by the hash (core/signing.py: audit_message)
    signature: str | None = None


class Entity(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant: str
    namespace: str
    key: str  # normalised name: lower case, single spaces
    name: str
    kind: str | None = None
    aliases: tuple[str, ...] = ()


class Relation(BaseModel):
    """A typed edge between two entities, bi-temporal like memories."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    namespace: str
    source: str  # entity key
    relation: str
    target: str  # entity key
    memory_id: str | None = None
    t_created: datetime
    t_expired: datetime | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class ScoreBreakdown(BaseModel):
    """Why a result ranked where it did."""

    model_config = ConfigDict(frozen=True)

    vector_rank: int | None = None
    vector_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    lanes: dict[str, int] = Field(default_factory=dict)  # every lane's rank (incl. LLM lanes)
    rrf: float = 0.0
    rrf_norm: float = 0.0
    graph_hops: int | None = None
    graph_bonus: float = 0.0
    decay: float = 1.0
    boost: float = 0.0
    freshness: float = 0.0
    session: float = 0.0  # neighbouring conversation turns: support, less a turn's asking
    coverage: float = 0.0  # query-term coverage of the candidate and its session
    time_cue: float = 0.0  # a "when" query and a memory that says when
    relevance: float = 0.0
    synthetic: bool = False
    final: float = 0.0


class RecallResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    memory: Memory
    score: float
    tokens: int
    breakdown: ScoreBreakdown


class RecallResponse(BaseModel):
    """A ranked, budget-packed answer plus what degraded on the way."""

    model_config = ConfigDict(frozen=True)

    query: str
    as_of: datetime
    results: tuple[RecallResult, ...]
    tokens_used: int
    token_budget: int
    errors: dict[str, str] = Field(default_factory=dict)  # lane -> message, e.g. vector_error
    recall_id: str | None = None
    query_entities: tuple[str, ...] = ()  # entity keys recognised in the query

    def __iter__(self) -> Iterator[RecallResult]:  # type: ignore[override]
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


class CutResult(BaseModel):
    """A ranked result the token budget left out, with its place in the whole ranking."""

    model_config = ConfigDict(frozen=True)

    rank: int  # 1-based place in the ranking before the budget fit
    result: RecallResult


class RecallExplanation(BaseModel):
    """One recall's response as ``recall`` returns it, plus what its budget fit cut.

    Both come from the same single ranking: the budget fit is the last step and never
    reorders, so ``response`` is byte for byte what ``recall`` answers for these inputs.
    """

    model_config = ConfigDict(frozen=True)

    response: RecallResponse
    cut: tuple[CutResult, ...] = ()


class TraceStep(BaseModel):
    """One pipeline step of a recorded recall, as its trace event says."""

    model_config = ConfigDict(frozen=True)

    step: str
    candidates_in: int
    candidates_out: int
    ms: float
    error: str | None = None


class RecordedRecall(BaseModel):
    """A recall as its trace recorded it: the inputs a replay needs and what it returned.

    ``query`` is None unless the trace was written with ``trace.include_content`` (the
    trace keeps no text by default); the recall id is a hash of every input, query
    included, so a replay with the right query returns the same id.
    """

    model_config = ConfigDict(frozen=True)

    recall_id: str
    tenant: str
    namespace: str | None
    query: str | None
    as_of: datetime
    time_window: tuple[datetime, datetime] | None = None
    token_budget: int
    result_ids: tuple[str, ...]
    tokens_used: int
    errors: dict[str, str] = Field(default_factory=dict)
    steps: tuple[TraceStep, ...] = ()
    runs: int = 1  # how many times the trace recorded this very recall


class MemoryPage(BaseModel):
    """One page of ``AgentMemory.list_page``: rows, the total, and where the next starts."""

    model_config = ConfigDict(frozen=True)

    memories: tuple[Memory, ...]
    total: int  # rows the whole listing holds at ``as_of``
    next_cursor: str | None  # None on the last page
    as_of: datetime  # the moment every page of this listing reads


class Stats(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant: str
    namespace: str | None
    total: int
    active: int
    superseded: int
    archived: int
    episodes: int
    entities: int
    relations: int
    audit_entries: int
    embedder: str | None
    dimension: int | None
