"""The question's speaker: "what did Melanie paint?" is answered by Melanie's turns.

Graph affinity (graph.py) gives every entity the query names the same hop-0 bonus,
so in "What does Gina say to Jon about the opening?" Gina's and Jon's turns stand
level, and in a one-name question the other speaker is only one hop behind
(``talks_with``). In a conversation, what a named person said, did, thinks or likes
is told in that person's own turns; so the turns spoken by the question's subject
gain ``weight``.

The subject is found from word order alone (no parser, no language model): the
first known speaker the query names that is not a possessive ("Caroline's
decision" names whose decision, not who speaks); failing that, the first
possessive ("What do Melanie's kids like?" is told by Melanie). Two names joined
by "and"/"or" ("How do Jon and Gina both destress?") ask about both: no subject.
Only conversation turns (``metadata["turn"]["speaker"]``, written by
``add_turns``) are touched; every other memory ranks as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.entities import words
from attestor_arango.validation import entity_key

_JOINS = frozenset({"and", "or", "&"})


def turn_speaker(c: Candidate) -> str | None:
    """The entity key of the speaker of a conversation turn, else None."""
    link = c.memory.metadata.get("turn")
    if c.synthetic or not isinstance(link, dict):
        return None
    speaker = link.get("speaker")
    return entity_key(speaker) if isinstance(speaker, str) else None


def _mentions(q: tuple[str, ...], keys: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, key) of each whole-word mention of the given entity keys, by position."""
    found: list[tuple[int, int, str]] = []
    for key in sorted(set(keys)):
        form = words(key)
        n = len(form)
        if not form or len("".join(form)) < 2:
            continue
        for start in range(len(q) - n + 1):
            if q[start : start + n] == form:
                found.append((start, start + n, key))
    found.sort()
    return found


def query_subject(query: str, speakers: Iterable[str]) -> str | None:
    """The key of the speaker the query asks about, or None (none named, or a pair).

    ``speakers`` are entity keys (lower case, single spaces: how a speaker's name is
    kept); each is looked for in the query as whole words.
    """
    q = words(query)
    mentions = _mentions(q, speakers)
    if not mentions:
        return None
    plain: list[tuple[int, int, str]] = []
    owners: list[tuple[int, int, str]] = []
    for start, end, key in mentions:
        (owners if end < len(q) and q[end] == "s" else plain).append((start, end, key))
    if plain:
        start, end, key = plain[0]
        for other_start, other_end, other in mentions:
            if other == key:
                continue
            # "Jon and Gina" / "Gina and Jon": the question is about both
            if (other_start == end + 1 and q[end] in _JOINS) or (
                other_end == start - 1 and q[other_end] in _JOINS
            ):
                return None
        return key
    return owners[0][2] if owners else None


def apply_speaker(
    cands: Sequence[Candidate], query: str, query_keys: Iterable[str], weight: float
) -> str | None:
    """Adds ``weight`` to the graph bonus of each turn spoken by the query's subject.

    ``query_keys`` are the entities the query names (graph affinity's keys): only
    those can be the subject, so the cost does not grow with the tenant's entities.
    Returns the subject's key (None when there is none, and nothing changes).
    """
    spoken = [(c, turn_speaker(c)) for c in cands]
    speakers = {s for _, s in spoken if s is not None}.intersection(query_keys)
    if not speakers:
        return None
    subject = query_subject(query, speakers)
    if subject is None:
        return None
    for c, speaker in spoken:
        if speaker == subject:
            c.graph_bonus = round(c.graph_bonus + weight, 12)
            c.compute_relevance()
    return subject
