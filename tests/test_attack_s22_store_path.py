"""``AgentMemory(path)`` takes a file or folder path only: ``5``, ``True`` and
``b"/tmp/x.db"`` were turned into text and opened a store in a folder named ``5``,
``True`` or ``b'`` under the working directory; a NUL or a lone surrogate raised a raw
ValueError / UnicodeEncodeError; ``""`` silently opened the default store (a scripted
path that came out blank wrote elsewhere). Each is now a ValidationError, with no file
or folder created."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory


@pytest.mark.parametrize(
    "given", [5, True, 2.5, b"/tmp/x.db", [], "", "  ", "x\x00y.db", "a\ud800.db"]
)
def test_a_path_that_is_no_path_is_refused_creating_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: object
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with pytest.raises(ValidationError, match="path"):
        AgentMemory(given, embedder=HashingEmbedder(8))  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


def test_a_str_or_pathlike_still_opens(tmp_path: Path) -> None:
    for given in (tmp_path / "a.db", str(tmp_path / "b.db"), tmp_path / "folder"):
        with AgentMemory(given, embedder=HashingEmbedder(8)) as mem:
            assert mem.add("Ann likes tea").content == "Ann likes tea"


@pytest.mark.parametrize("given", [5, "x", {}, True, object()])
@pytest.mark.parametrize("name", ["context", "config"])
def test_a_context_or_config_of_another_type_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, given: object
) -> None:
    # before: an AttributeError at the first call (or {} read as "none": the defaults)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValidationError, match=name):
        AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(8), **{name: given})
    assert os.listdir(tmp_path) == []
