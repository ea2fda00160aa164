"""Context packs: a recall turned into what an LLM prompt needs, and the prompt.

A ``ContextPack`` is frozen, hashable and JSON-serialisable (plain strings,
numbers and tuples), so the same recall gives the same pack bytes and a pack
can be cached, compared or logged by its hash. ``render_prompt`` builds a
Chain-of-Note prompt: one note per entry, a synthesis citing entries by id,
ABSTAIN when the notes do not answer and CONFLICT when they disagree, with the
validity windows given so the model can decide which fact held when.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from attestor_arango.clock import iso, to_us
from attestor_arango.models import RecallResponse, RecallResult


@dataclass(frozen=True, slots=True)
class PackEntry:
    id: str
    content: str
    valid_from: str
    valid_until: str | None
    recorded_at: str
    confidence: float
    score: float
    entity: str | None
    category: str | None
    source_episode_id: str | None
    agent_id: str
    role: str
    session_id: str | None
    agent_trail: tuple[str, ...]
    synthetic: bool

    @classmethod
    def from_result(cls, r: RecallResult) -> PackEntry:
        m, p = r.memory, r.memory.provenance
        return cls(
            id=m.id,
            content=m.content,
            valid_from=iso(to_us(m.valid_from)) or "",
            valid_until=None if m.valid_until is None else iso(to_us(m.valid_until)),
            recorded_at=iso(to_us(m.t_created)) or "",
            confidence=m.confidence,
            score=r.score,
            entity=m.entity,
            category=m.category,
            source_episode_id=p.source_episode_id,
            agent_id=p.agent_id,
            role=p.role,
            session_id=p.session_id,
            agent_trail=tuple(p.agent_trail),
            synthetic=r.breakdown.synthetic,
        )


@dataclass(frozen=True, slots=True)
class ContextPack:
    query: str
    as_of: str
    recall_id: str | None
    entries: tuple[PackEntry, ...]
    tokens_used: int
    token_budget: int
    errors: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_response(cls, response: RecallResponse) -> ContextPack:
        return cls(
            query=response.query,
            as_of=iso(to_us(response.as_of)) or "",
            recall_id=response.recall_id,
            entries=tuple(PackEntry.from_result(r) for r in response.results),
            tokens_used=response.tokens_used,
            token_budget=response.token_budget,
            errors=tuple(sorted(response.errors.items())),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no spaces; identical bytes for identical packs."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def __len__(self) -> int:
        return len(self.entries)

    def render_prompt(self) -> str:
        return render_prompt(self)

    @property
    def support(self) -> float:
        """How much of the question the best note covers, 0-1: the largest share of the
        query's scoring terms (stems, stop words left out) found in one entry's content.

        Text only and deterministic (same pack, same value; not part of the pack's JSON).
        ``benchmarks/abstention.py`` measures how well a threshold on it predicts that a
        question has no answer in memory (the prompt's ABSTAIN case).
        """
        # imported here: a client that only decodes packs needs no stemmer
        from attestor_arango.text.stemming import scoring_terms

        wanted = set(scoring_terms(self.query))
        if not wanted:
            return 0.0
        best = max((len(wanted & set(scoring_terms(e.content))) for e in self.entries), default=0)
        return best / len(wanted)

    # Attestor's names for the same pack ------------------------------------------------------
    @property
    def memories(self) -> list[dict[str, Any]]:
        """The entries as Attestor's ``pack.memories``: id, content, validity_window,
        confidence, source_episode_id (a new list each call; the pack stays frozen)."""
        return [
            {
                "id": e.id,
                "content": e.content,
                "validity_window": (e.valid_from, e.valid_until),
                "confidence": e.confidence,
                "source_episode_id": e.source_episode_id,
            }
            for e in self.entries
        ]

    @property
    def prompt(self) -> str:
        """Attestor's ``pack.prompt``: the same text as ``render_prompt()``."""
        return render_prompt(self)


_RULES = """\
How to answer:
1. NOTES. For each memory above, write one short note: its id, whether it bears on the
   question, and what it says about it. Skip nothing; say "irrelevant" where it does not bear.
2. SYNTHESIS. Answer the question from the relevant notes only, citing every claim with
   the id of the memory it comes from, like [id]. Use no outside knowledge.
3. CONFLICT. If relevant memories disagree, begin the answer with "CONFLICT:" and list the
   ids that disagree. Decide with the validity windows: prefer the memory whose window
   contains "now"; if several do, the one with the latest valid_from; then the one
   recorded last. Say which one you chose and why.
4. ABSTAIN. If the relevant notes do not answer the question, reply with exactly
   "ABSTAIN" after the notes, and nothing else. Never guess."""


def _window(e: PackEntry) -> str:
    return f"{e.valid_from} .. {e.valid_until or 'open'}"


def render_prompt(pack: ContextPack) -> str:
    """The Chain-of-Note prompt for a pack (deterministic text)."""
    lines = [
        "You answer a question using only the memories below.",
        f"Now: {pack.as_of}",
        f"Question: {pack.query}",
        "",
        "Memories:",
    ]
    if not pack.entries:
        lines.append("(none)")
    for e in pack.entries:
        source = f"; source episode {e.source_episode_id}" if e.source_episode_id else ""
        kind = "; derived from the entity graph" if e.synthetic else ""
        lines.append(
            f"[{e.id}] valid {_window(e)}; recorded {e.recorded_at}; "
            f"confidence {e.confidence:.2f}; by {e.agent_id} ({e.role}){source}{kind}"
        )
        lines.append(f"    {e.content}")
    lines += ["", _RULES, ""]
    return "\n".join(lines)
