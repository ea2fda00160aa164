"""Neighbouring turns: a conversation turn is evidence for the turns next to it.

Turns stored through ``add_turns`` (ingest/conversation.py) carry
``metadata["turn"]["replies_to"]``: the id of the turn they answer. A question
and its answer belong together: the answer ("Last Sunday, at the park") often
holds no word of the question, and the question holds none of the answer. So
each turn gains ``weight`` times the lane relevance (normalised RRF) of its best
neighbour among the candidates: the turn it replies to, or a turn replying to it.

The turn a strong candidate replies to may not be a candidate at all; the
``fetch_top`` most relevant candidates have theirs fetched by id (one store
call) and added, visible in the view or not at all, with no lane relevance of
their own. Memories without the link (plain ``add``) are untouched.

A turn that ends by asking ("Wow, what did you paint?") hands the word to the
other speaker: what it holds is the question, and the answer is in the reply.
A recall query asks much the same question, so it matches the asking turn's
words at least as well as the answer's (which quotes the question it replies to,
ingest/conversation.py), and the asking turn also gains its answer's relevance
above. So a turn whose own words end in a question mark yields ``weight`` (one
graph-hop step) to the turns that state something, unless the query asks what
was asked ("What did Jon ask Gina?"). Its answer keeps the question's support.

A memory stored with plain ``add`` whose words end by asking yields the same: a chat
written one ``add()`` per turn ("Caroline (12 July 2023): That's so nice! What pet do
you have?") has no link, but its question holds the query's words and no answer just
the same, and a note that ends by asking ("Should we move the launch to May?") states
no fact either. Its words are the memory's content (a turn's own words, without the
quoted question it replies to, when it is a linked turn).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from attestor_arango.retrieval.candidates import Candidate, order
from attestor_arango.retrieval.rounding import round12
from attestor_arango.scope import Scope, TemporalView
from attestor_arango.store.protocol import MemoryStore


def has_turns(cands: Sequence[Candidate]) -> bool:
    """Whether a (non-synthetic) candidate is a conversation turn, with its link: every
    step of this module reads only those, so without one none of them has anything to do."""
    # a loop, not any() over a generator: a resumed generator frame per candidate was most of
    # this test's cost, and it runs on every recall, over every candidate when none is a turn
    # (plain adds): so first the key test, no call (~1,000 instructions a candidate less)
    for c in cands:
        meta = c.fields["metadata"]
        if "turn" in meta and not c.synthetic and isinstance(meta["turn"], dict):
            return True
    return False


def replies_to(c: Candidate) -> str | None:
    link = c.memory.metadata.get("turn")
    if not isinstance(link, dict):
        return None
    target = link.get("replies_to")
    return target if isinstance(target, str) else None


def _visible(
    store: MemoryStore, scope: Scope, view: TemporalView, ids: Sequence[str]
) -> list[Candidate]:
    found = store.get_memories(scope, ids)
    out: list[Candidate] = []
    for i in sorted(found):
        m = found[i]
        if m.us("t_created") > view.as_of or m.us("t_expired") <= view.t_expired_after:
            continue
        if view.window is not None:
            start, end = view.window
            if m.us("valid_until") <= start or m.us("valid_from") >= end:
                continue
        out.append(Candidate(memory=m))
    return out


def add_neighbours(
    store: MemoryStore, scope: Scope, view: TemporalView, cands: list[Candidate], fetch_top: int
) -> list[Candidate]:
    """``cands`` plus the turns the ``fetch_top`` best candidates reply to, when missing."""
    have = {c.id for c in cands}
    wanted = sorted(
        {
            t
            for c in order(cands)[:fetch_top]
            if not c.synthetic and (t := replies_to(c)) is not None and t not in have
        }
    )
    if not wanted:
        return cands
    return cands + _visible(store, scope, view, wanted)


def apply_neighbours(cands: Sequence[Candidate], weight: float) -> None:
    """Adds ``weight * best neighbour's rrf_norm`` to each linked turn (``Candidate.session``)."""
    by_id = {c.id: c for c in cands if not c.synthetic}
    best: dict[str, float] = {}
    for c in by_id.values():
        target = replies_to(c)
        if target is None or target not in by_id:
            continue
        other = by_id[target]
        best[c.id] = max(best.get(c.id, 0.0), other.rrf_norm)
        best[other.id] = max(best.get(other.id, 0.0), c.rrf_norm)
    for cid in sorted(best):
        c = by_id[cid]
        c.session = round(weight * best[cid], 12)
        c.compute_relevance()


# what may follow a turn's last question mark: spaces, closing quotes and brackets, "!"
_CLOSERS = " \t\r\n\"')]}\u00bb\u201d\u2019!"
# NFKC folds the full-width "？" into "?"; the Arabic mark stays itself
_QUESTION_MARKS = ("?", "\u061f")
_ASKS_WHAT_WAS_ASKED = re.compile(r"\b(?:ask|asks|asked|asking|question|questions)\b")


def ends_asking(text: str) -> bool:
    """Whether a turn's words end by asking: their last mark, past closing quotes,
    brackets and exclamation marks, is a question mark ("Any tips?", "Really?!",
    "¿Vienes mañana?", "明天来吗？")."""
    if not text.isascii():  # NFKC leaves ASCII as it is (most memories: no copy made)
        text = unicodedata.normalize("NFKC", text)
    return text.rstrip(_CLOSERS).endswith(_QUESTION_MARKS)


def asking_words(c: Candidate) -> str | None:
    """The words whose end says whether ``c`` asks: a linked conversation turn's own words
    (``metadata["turn"]["text"]``), else the memory's content; None for a synthetic
    candidate (a relation, not something said) or a turn link without its words."""
    if c.synthetic:
        return None
    fields = c.fields
    link = fields["metadata"].get("turn")
    if link is None:
        content: str = fields["content"]
        return content
    said = link.get("text") if isinstance(link, dict) else None
    return said if isinstance(said, str) else None


def _asks(c: Candidate) -> bool:
    """``ends_asking(asking_words(c))``, one call a candidate: an ASCII content with no
    question mark anywhere (most memories) is answered by one substring search."""
    if c.synthetic:
        return False
    fields = c.fields
    if "turn" not in fields["metadata"]:
        content: str = fields["content"]
        if content.isascii():
            return "?" in content and content.rstrip(_CLOSERS).endswith("?")
        return ends_asking(content)
    said = asking_words(c)
    return said is not None and ends_asking(said)


def apply_asking(cands: Sequence[Candidate], query: str, weight: float) -> None:
    """Takes ``weight`` off the neighbour support (``Candidate.session``) of each
    memory whose words end by asking (``asking_words``: a conversation turn's own, or a
    plain memory's content), unless the query asks what was asked. Sets the session only:
    the relevance is summed after it (``apply_decay_boost``, pipeline.py)."""
    if weight == 0:
        return
    q = query.lower()
    # every word the pattern looks for holds "ask" or "question": the search only then
    if ("ask" in q or "question" in q) and _ASKS_WHAT_WAS_ASKED.search(q):
        return
    asking = [c for c in cands if _asks(c)]
    # the lowered session of each distinct session, rounded once (``round12``: ``round(x,
    # 12)`` bit for bit; equal sessions lower to equal values): a plain-add chat holds ~25
    # asking memories a recall, all at the default 0.0, so one value is rounded, not 25 (the
    # array form, ``round_list``, cost ~2,700 instructions a value at that size). Their
    # relevance is left to the decay step, which runs after this one and sums every
    # candidate's (pipeline.py; ~1.1% of a recall here)
    lowered = {s: round12(s - weight) for s in {c.session for c in asking}}
    for c in asking:
        c.session = lowered[c.session]
