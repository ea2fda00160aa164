"""An update stored seconds after the fact it updates ranks first, as one a month later does.

Outside yardstick: knowledge-update cases written by others. Ours dated each statement
30 days apart with ``valid_from``; cases written as a script or one agent's run writes
them store the old and the new fact a second apart with plain ``add(text)``. Freshness
treated statements without a session that were said within a day of each other as one
conversation going on, never as an update, so without a word such as "now" or
"switched" the older fact kept rank 1: these six pairs (written for this test, in no
benchmark) ranked the new fact first once in six. With the sessions alone deciding what
is one conversation, the newer statement takes over the rank of the one it updates.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import LocalMiniLMEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

# (old fact, new fact, question): the new one says no word of change
PAIRS = [
    ("My bank is Barclays.", "I keep my money with Monzo.", "Which bank do I use?"),
    (
        "I sleep on the left side of the bed.",
        "I take the right side of the bed.",
        "Which side of the bed do I sleep on?",
    ),
    (
        "My go-to coffee order is a flat white.",
        "At the cafe I always ask for an oat latte.",
        "What coffee do I order?",
    ),
    ("Our team standup is at 9am.", "The daily standup happens at 10:30.", "When is the standup?"),
    ("My laptop is a ThinkPad.", "I work on a MacBook Air.", "What laptop do I use?"),
    ("I live in Leeds.", "Home for me is Bristol.", "Where do I live?"),
]
OTHER = ["I have two sisters.", "I once ran a half marathon.", "I'm allergic to cats."]
START = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.fixture(scope="module")
def embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


def _top_after(tmp_path: Path, embedder: LocalMiniLMEmbedder, index: int, gap: timedelta) -> str:
    old, new, question = PAIRS[index]
    clock = ManualClock(START)
    with AgentMemory(tmp_path, embedder=embedder, clock=clock, ids=SeededIdSource(index)) as mem:
        at = START
        for text in [OTHER[0], old, OTHER[1], OTHER[2], new]:
            at += gap
            clock.set(at)
            mem.add(text)
        return mem.recall(question).results[0].memory.content


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_the_newer_fact_ranks_first_when_written_a_second_later(
    tmp_path: Path, embedder: LocalMiniLMEmbedder, index: int
) -> None:
    assert _top_after(tmp_path, embedder, index, timedelta(seconds=1)) == PAIRS[index][1]


def test_within_a_session_similar_statements_stay_one_conversation(
    tmp_path: Path, embedder: LocalMiniLMEmbedder
) -> None:
    """The session rule stands: in one conversation (one ``session_id``), a later similar
    statement is the talk going on, so the first answer keeps its rank."""
    from attestor_arango import AgentContext

    ctx = AgentContext(agent_id="a", tenant="t", namespace="n", session_id="s1")
    clock = ManualClock(START)
    old, new, question = PAIRS[0]
    with AgentMemory(tmp_path, embedder=embedder, clock=clock, ids=SeededIdSource(0)) as mem:
        at = START
        for text in [OTHER[0], old, OTHER[1], OTHER[2], new]:
            at += timedelta(seconds=1)
            clock.set(at)
            mem.add(text, context=ctx)
        assert mem.recall(question, context=ctx).results[0].memory.content == old
