"""AgentMemory's replaceable parts: a wrong type is refused before anything is opened.

``AgentMemory(embedder={})`` used to load the configured (default) embedder, ``store={}``
or ``store=False`` opened the configured store, ``clock=0`` ran on the system clock:
each part was taken with ``part or default``, so a falsy wrong value meant "the
default" and a truthy one failed later, deep inside a write. Each is now a
``ValidationError`` naming the argument and what it accepts, raised before the
configuration's store, signing key or embedder is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.config import Config
from attestor_arango.core import runtime
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.embeddings.lazy import LazyEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.store.embedded.store import SQLiteStore

WRONG: list[tuple[str, Any]] = [
    ("embedder", {}),
    ("embedder", 0),
    ("embedder", "hashing"),
    ("embedder", HashingEmbedder),  # the class, not an instance
    ("embedder", np.zeros(3)),
    ("clock", 0),
    ("clock", "2026-01-01"),
    ("clock", ManualClock),
    ("clock", {}),
    ("ids", []),
    ("ids", "uuid7"),
    ("ids", SeededIdSource),
    ("store", {}),
    ("store", False),
    ("store", "memory.db"),
    ("store", SQLiteStore),
    ("config", {}),
    ("config", {"path": "x.db"}),
]


def signing_config(tmp_path: Path) -> Config:
    return Config(
        path=str(tmp_path / "m.db"),
        embedder="hashing",
        signing={"enabled": True, "key_path": None},
    )


@pytest.mark.parametrize(("name", "value"), WRONG, ids=lambda v: repr(v)[:20])
def test_a_wrong_part_is_refused_before_anything_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: Any
) -> None:
    monkeypatch.setattr(runtime, "_default_embedder", _no_default_embedder)
    kwargs: dict[str, Any] = {"config": signing_config(tmp_path), name: value}
    with pytest.raises(ValidationError, match=rf"^{name} must be .*, or None") as caught:
        AgentMemory(**kwargs)
    assert type(value).__name__ in str(caught.value) or isinstance(value, type)
    assert list(tmp_path.iterdir()) == []  # no store, no signing key (generated beside it)


def _no_default_embedder(config: Config) -> Any:
    raise AssertionError("the configured embedder was loaded")


@pytest.mark.parametrize("name", ["embedder", "clock", "ids", "store"])
def test_a_class_is_named_as_one(tmp_path: Path, name: str) -> None:
    classes: dict[str, Any] = {
        "embedder": HashingEmbedder,
        "clock": ManualClock,
        "ids": SeededIdSource,
        "store": SQLiteStore,
    }
    with pytest.raises(ValidationError, match=rf"got the class {classes[name].__name__}"):
        AgentMemory(tmp_path / "m.db", **{name: classes[name]})
    assert list(tmp_path.iterdir()) == []


class ProbingEmbedder:
    """An embedder whose name and dimension are learnt by a call (as the remote ones do)."""

    @property
    def name(self) -> str:
        raise AssertionError("the check asked the embedder for its name")

    @property
    def dimension(self) -> int:
        raise AssertionError("the check asked the embedder for its dimension")

    def embed(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("the check embedded a text")


class ForwardingClock:
    """A part that forwards every attribute (as LazyEmbedder does)."""

    def __init__(self, inner: ManualClock) -> None:
        self._inner = inner

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def test_the_right_parts_are_taken_as_they_are_without_being_used(tmp_path: Path) -> None:
    probing = ProbingEmbedder()
    clock = ManualClock()
    mem = AgentMemory(tmp_path / "a.db", embedder=probing, ids=SeededIdSource(1), clock=clock)
    assert mem.embedder is probing
    mem.close()
    lazy = LazyEmbedder(_unbuilt)
    forwarding = ForwardingClock(clock)
    mem = AgentMemory(tmp_path / "b.db", embedder=lazy, clock=forwarding)
    assert mem.embedder is lazy and not lazy.loaded
    mem.close()
    store = SQLiteStore(tmp_path / "c.db")
    mem = AgentMemory(store=store, embedder=HashingEmbedder(16))
    assert mem.store is store
    mem.close()


def _unbuilt() -> HashingEmbedder:
    raise AssertionError("the lazy embedder was built by the check")
