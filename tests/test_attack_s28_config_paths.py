"""Attack: file paths in a ``Config`` that no file system takes (a NUL, a lone surrogate).

The positional ``AgentMemory(path)`` was checked; the same path given as ``Config(path=)``
raised a bare ``ValueError`` ("embedded null byte") or ``UnicodeEncodeError``, and a bad
``trace.path`` was accepted and failed only at the first recall. Each is now a
``ValidationError`` naming the setting, raised before anything is opened or written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango.config import Config, SigningSettings, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

BAD = ["a\x00b", "a\ud800b"]


def _configs(folder: Path, bad: str) -> list[tuple[str, Config]]:
    db = str(folder / "mem.db")
    return [
        ("config.path", Config(path=str(folder / bad))),
        ("config.trace.path", Config(path=db, trace=TraceSettings(enabled=True, path=bad))),
        ("config.local_model_path", Config(path=db, local_model_path=bad)),
        ("config.signing.key_path", Config(path=db, signing=SigningSettings(key_path=bad))),
    ]


@pytest.mark.parametrize("bad", BAD, ids=["nul", "surrogate"])
def test_a_config_path_no_file_system_takes_is_a_validation_error(tmp_path: Path, bad: str) -> None:
    for setting, config in _configs(tmp_path, bad):
        with pytest.raises(ValidationError, match=setting.replace(".", r"\.")):
            AgentMemory(config=config, embedder=HashingEmbedder(64))
        assert list(tmp_path.iterdir()) == [], setting  # nothing opened or written


def test_good_config_paths_still_open(tmp_path: Path) -> None:
    trace = TraceSettings(enabled=True, path=str(tmp_path / "trace.jsonl"))
    mem = AgentMemory(
        config=Config(path=str(tmp_path / "mem.db"), trace=trace), embedder=HashingEmbedder(64)
    )
    mem.close()
    assert (tmp_path / "mem.db").exists()
