"""The round verbatim as a memory, so recall finds what was said but not extracted.

Extraction keeps facts; a round often says more than its facts: a question ("can you
move my dentist appointment?"), an assistant's answer addressed to the user, small
details no frame reads. The episode row keeps the words, but recall searches
memories, so ``ingest_round`` also writes the round as one memory of category
``episode`` (tagged ``episode``) whose source episode is the round: recall reaches
it, ``get_episode`` opens the evidence. A round whose every sentence became a fact
(or is small talk) gets none: its facts already say it, word for word, and a second
copy would only crowd the top results. The memory belongs to the user (its entity is
the user's name), starts at the user's message time and goes through the one write
path like every fact. It is a record, not a fact: ``current_facts`` leaves it out,
and the freshness step treats it like any other statement, so a newer statement on
its topic outranks it when the question asks about the present.
"""

from __future__ import annotations

from collections.abc import Sequence

from attestor_arango.clock import to_us
from attestor_arango.context import AgentContext
from attestor_arango.core.writes import Writer
from attestor_arango.ingest.extract import carries_nothing
from attestor_arango.ingest.model import Fact
from attestor_arango.ingest.text import normalise, sentences
from attestor_arango.models import Episode, Memory

EPISODE_CATEGORY = "episode"
EPISODE_TAG = "episode"


def round_text(episode: Episode, label: str) -> str:
    """The round as spoken: "<user>: ..." then "assistant: ..." on its own line."""
    parts = []
    if episode.user_text.strip():
        parts.append(f"{label}: {episode.user_text.strip()}")
    if episode.assistant_text.strip():
        parts.append(f"assistant: {episode.assistant_text.strip()}")
    return "\n".join(parts)


def needs_verbatim(episode: Episode, facts: Sequence[Fact]) -> bool:
    """Whether some sentence of the round is neither a fact's words nor small talk."""
    said = {normalise(f.text) for f in facts}
    for text in (episode.user_text, episode.assistant_text):
        for sentence in sentences(text):
            if normalise(sentence) not in said and not carries_nothing(sentence):
                return True
    return False


def write_verbatim(
    writer: Writer, ctx: AgentContext, episode: Episode, facts: Sequence[Fact], label: str
) -> Memory | None:
    """The round's verbatim memory (inside the caller's transaction), or None when its
    facts already say all of it."""
    if not needs_verbatim(episode, facts):
        return None
    return writer.write(
        ctx,
        content=round_text(episode, label),
        entity=label,
        category=EPISODE_CATEGORY,
        tags=("ingest", EPISODE_TAG),
        confidence=1.0,
        valid_from_us=to_us(episode.user_time),
        valid_until_us=None,
        metadata={"episode": {"id": episode.id, "session_id": episode.session_id}},
        source_episode_id=episode.id,
        supersede=False,
    )
