"""Conversation turns stored as they happen: speaker, session and message time kept.

A chat turn on its own is often meaningless to recall ("Yes, last Sunday!"): what
it answers carries the topic. So each turn becomes one verbatim memory whose text
says who spoke, on which day, and (within its session) the turn it replies to;
its entity is the speaker, its provenance session the conversation's session, its
``valid_from`` the message time. The turn's metadata links it to the turn before
it (``replies_to``) and numbers it within the session, and the speakers of a
session are linked by a ``talks_with`` relation, so a question naming one speaker
reaches what the other said to them through graph affinity. The caller passes the
words as spoken and does no shaping; ``recall`` uses these signals by itself.

Turns are tagged ``verbatim`` (freshness never treats one turn as the update of
another: each says what was said when) and ``turn``. The service takes the runtime
and the writer (the one write path, which checks quotas and audits every turn), like
every other; ``AgentMemory.add_turns`` checks the permission once and calls it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from attestor_arango.clock import OPEN, Clock, check_not_ahead, from_us, parse_time, to_us
from attestor_arango.context import MAX_AGENT_ID, AgentContext
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.writes import Writer
from attestor_arango.errors import ValidationError
from attestor_arango.ids import IdSource
from attestor_arango.models import Memory, Relation
from attestor_arango.scope import TemporalView
from attestor_arango.store.protocol import GraphStore, MemoryStore
from attestor_arango.validation import (
    check_content,
    check_label,
    check_metadata,
    check_tags,
    entity_key,
    model_problems,
)

TURN_TAG = "turn"
VERBATIM_TAG = "verbatim"
REPLY_SNIPPET_CHARS = 240  # enough of the previous turn to say what this one answers
MAX_TURN_CHARS = 64_000
LAST_TURN_ROWS = 1_000  # rows ``last_turn`` asks the store for at a time


class ConversationTurn(BaseModel):
    """One message of a conversation, as it was said.

    ``speaker`` is who said it (a person's or agent's name; it becomes the memory's
    entity), ``text`` the words, ``session_id`` the conversation it belongs to
    (default: the context's session), ``timestamp`` when it was said (default:
    now). ``metadata`` is kept on the memory as given.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    speaker: str
    text: str
    session_id: str | None = None
    timestamp: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timestamp", mode="before")
    @classmethod
    def _time(cls, value: object) -> datetime | None:
        if value is None:
            return None
        return from_us(parse_time(value, field="timestamp"))  # type: ignore[arg-type]

    @field_validator("speaker")
    @classmethod
    def _speaker(cls, value: str) -> str:
        if not value.strip() or len(value) > 256:
            raise ValueError("speaker must be a non-empty name of at most 256 characters")
        return value.strip()

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > MAX_AGENT_ID or not value.isprintable()):
            raise ValueError(f"session_id must be at most {MAX_AGENT_ID} printable characters")
        return value

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("turn text is empty")
        if len(value) > MAX_TURN_CHARS or "\x00" in value:
            raise ValueError(f"turn text must be at most {MAX_TURN_CHARS} characters, no NUL")
        return value

    @classmethod
    def parse(cls, raw: ConversationTurn | dict[str, Any]) -> ConversationTurn:
        """A turn from itself or a mapping; bad input raises ValidationError."""
        if isinstance(raw, ConversationTurn):
            return raw
        if not isinstance(raw, dict):
            raise ValidationError("each turn must be a ConversationTurn or a mapping")
        try:
            return cls.model_validate(raw)
        except Exception as exc:  # pydantic's message lists every bad field
            raise ValidationError(f"invalid conversation turn: {model_problems(exc)}") from exc


def session_tag(session_id: str) -> str:
    """A short, fixed-length tag naming a session (session ids may be long)."""
    return "session:" + hashlib.sha256(session_id.encode()).hexdigest()[:16]


def turn_text(turn: ConversationTurn, at_us: int, previous: Memory | None) -> str:
    """What the turn's memory says: speaker, day, words, and what it replies to."""
    when = from_us(at_us)
    text = f"{turn.speaker} ({when.day} {when:%B %Y}): {turn.text}"
    if previous is not None:
        info = previous.metadata.get("turn", {})
        said = str(info.get("text", previous.content))
        if len(said) > REPLY_SNIPPET_CHARS:
            said = said[:REPLY_SNIPPET_CHARS] + "..."
        text += f" (replying to {info.get('speaker', previous.entity)}: {said})"
    return text


def last_turn(store: MemoryStore, ctx: AgentContext, session_id: str, now_us: int) -> Memory | None:
    """The latest stored turn of a session (by message time, then turn index; on a tie
    the first in (t_created, id) order), if any.

    The store hands over the session's rows one message time at a time, newest first
    (``latest_in_session``, read through an index), at most ``LAST_TURN_ROWS`` a read;
    rows that are no turn of the session (``turn_index``: the turn tags are plain tags
    any writer may give) are passed over. So the cost is the rows from the latest turn
    on, whatever the size of the tenant or the session; before, the tenant's rows tagged
    with the session were listed, oldest first and 10,000 at most, for each new session
    of a call (a longer session linked its next turn to one of its first 10,000).
    """
    view = TemporalView(as_of=now_us)
    tag = session_tag(session_id)
    before = OPEN + 1  # every message time is below it
    while True:
        best: tuple[int, Memory] | None = None
        at: int | None = None
        offset = 0
        while True:
            rows = store.latest_in_session(
                ctx.scope, session_id, tag, view, before, LAST_TURN_ROWS, offset
            )
            for m in rows:
                at = m.us("valid_from")
                ours = TURN_TAG in m.tags and m.provenance.session_id == session_id
                index = turn_index(m) if ours else None
                if index is not None and (best is None or index > best[0]):
                    best = (index, m)
            if len(rows) < LAST_TURN_ROWS:
                break
            offset += len(rows)
        if best is not None:
            return best[1]
        if at is None:  # no row left below ``before``
            return None
        before = at


def turn_index(memory: Memory) -> int | None:
    """The memory's place in its session, or None when it is no turn ``add_turns`` stored:
    the turn tags are plain tags any writer may give (``add``), so a record with them and
    no index, or one that is not a whole number from 0 to 2**53 (a text, a list, ``true``,
    a float past 64 bits when incremented), is not taken for the session's last turn;
    before, it made every later ``add_turns`` of the session raise KeyError/TypeError."""
    info = memory.metadata.get("turn")
    index = info.get("index") if isinstance(info, dict) else None
    ok = isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 2**53
    return index if ok else None


def link_speakers(
    store: GraphStore, ctx: AgentContext, ids: IdSource, clock: Clock, a: str, b: str
) -> None:
    """A ``talks_with`` edge between two speakers, once per pair and direction-free."""
    src, dst = sorted((entity_key(a), entity_key(b)))
    if not src or not dst or src == dst:
        return
    view = TemporalView(as_of=clock.now_us())
    for rel in store.relations_touching(ctx.scope, [src], view):
        if rel.relation == "talks_with" and {rel.source, rel.target} == {src, dst}:
            return
    now = clock.now_us()
    store.add_relation(
        ctx.scope,
        Relation(
            id=ids.new_id(now),
            tenant=ctx.tenant,
            namespace=ctx.scope.require_namespace(),
            source=src,
            relation="talks_with",
            target=dst,
            t_created=from_us(now),
        ),
    )


def add_turns(
    rt: Runtime,
    writer: Writer,
    ctx: AgentContext,
    turns: Sequence[ConversationTurn | dict[str, Any]],
    *,
    source_episode_id: str | None = None,
) -> list[Memory]:
    """Stores each turn as one memory, in order; returns the memories written.

    Every turn is validated before anything is written, so a bad turn rejects the
    whole call and stores nothing; so does a write refused part-way (a quota spent):
    the turns are stored in one transaction. A turn without a session uses the context's
    session; one without either is stored stand-alone (no reply link).
    ``source_episode_id`` names the episode the turns come from (``ingest_round``).
    The caller has checked the write permission. Raises ``ValidationError`` (also for a
    timestamp ahead of the server's clock, as ``ingest_round``) and what
    ``Writer.write`` raises (``QuotaExceededError`` once the budget is spent).
    """
    episode = check_label(source_episode_id, "source_episode_id")
    if isinstance(turns, str | bytes) or not isinstance(turns, Sequence):
        raise ValidationError("turns must be a list of conversation turns")
    if len(turns) > (cap := rt.config.max_turns_per_call):  # they are written in one transaction
        raise ValidationError(
            f"at most {cap} turns per call (max_turns_per_call: the turns are stored in one "
            "transaction, which the store's other writes wait for); send the rest next"
        )
    parsed = [ConversationTurn.parse(t) for t in turns]
    now = rt.clock.peek()
    for turn in parsed:  # a message cannot come from the future (as for ingest_round)
        if turn.timestamp is not None:
            check_not_ahead(to_us(turn.timestamp), now, field="timestamp")
    previous: dict[str, Memory | None] = {}
    speakers: dict[str, str] = {}
    linked: set[tuple[str, str]] = set()
    out: list[Memory] = []
    with writer.together(ctx):  # a turn refused part-way (quota) stores none of them
        for turn in parsed:
            out.append(_store_turn(rt, writer, ctx, turn, episode, previous, speakers, linked))
    return out


def _store_turn(
    rt: Runtime,
    writer: Writer,
    ctx: AgentContext,
    turn: ConversationTurn,
    episode: str | None,
    previous: dict[str, Memory | None],
    speakers: dict[str, str],
    linked: set[tuple[str, str]],
) -> Memory:
    """One turn's memory (and its speakers' edge); ``previous``, ``speakers`` and
    ``linked`` carry what the call's earlier turns did."""
    store, clock, ids = rt.store, rt.clock, rt.ids
    session = turn.session_id or ctx.session_id
    at = clock.now_us() if turn.timestamp is None else to_us(turn.timestamp)
    prev: Memory | None = None
    index = 0
    tags: tuple[str, ...] = (VERBATIM_TAG, TURN_TAG)
    if session is not None:
        if session not in previous:
            previous[session] = last_turn(store, ctx, session, clock.now_us())
        prev = previous[session]
        index = 0 if prev is None else (turn_index(prev) or 0) + 1
        tags = (*tags, session_tag(session))
    link = {
        "speaker": turn.speaker,
        "text": turn.text,
        "session": session,
        "index": index,
        "replies_to": None if prev is None else prev.id,
    }
    # the copy shares ctx.usage, so the per-agent write limit sees every turn
    run_ctx = ctx if session == ctx.session_id else replace(ctx, session_id=session)
    memory = writer.write(
        run_ctx,
        content=check_content(turn_text(turn, at, prev), rt.config.max_content_chars),
        entity=check_label(turn.speaker, "entity"),
        category=None,
        tags=check_tags(tags),
        confidence=1.0,
        valid_from_us=at,
        valid_until_us=None,
        metadata=check_metadata({**turn.metadata, "turn": link}),
        source_episode_id=episode,
    )
    if session is not None:
        previous[session] = memory
        other = speakers.get(session)
        pair = (min(other or "", turn.speaker), max(other or "", turn.speaker))
        if other is not None and other != turn.speaker and pair not in linked:
            link_speakers(store, ctx, ids, clock, other, turn.speaker)
            linked.add(pair)
        speakers[session] = turn.speaker
    return memory
