"""SOLO mode and configuration layering."""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango.config import load_config
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory


def test_solo_mode_needs_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ATTESTOR_HOME", "ATTESTOR_PATH", "ATTESTOR_CONFIG", "ATTESTOR_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    with AgentMemory() as mem:
        m = mem.add("foo")
        assert (m.tenant, m.namespace) == ("local", "inbox")
        assert [r.memory.id for r in mem.recall("foo")] == [m.id]
    assert (tmp_path / "xdg" / "attestor-arango" / "memory.db").is_file()


def test_env_path_and_argument_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTESTOR_HOME", str(tmp_path / "home"))
    assert load_config().db_path() == tmp_path / "home" / "memory.db"
    monkeypatch.setenv("ATTESTOR_PATH", str(tmp_path / "p.db"))
    assert load_config().db_path() == tmp_path / "p.db"
    assert load_config(path=str(tmp_path / "arg.db")).db_path() == tmp_path / "arg.db"
    with AgentMemory(tmp_path / "direct.db", embedder=HashingEmbedder(16)) as mem:
        mem.add("x")
    assert (tmp_path / "direct.db").is_file()


def test_layering_env_then_yaml_then_arguments(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("embedder: local\nmax_content_chars: 100\narango:\n  database: fromyaml\n")
    env = {
        "ATTESTOR_EMBEDDER": "ollama",
        "ARANGO_DB": "fromenv",
        "ARANGO_URL": "http://h:1",
        "ATTESTOR_MAX_CONTENT_CHARS": "50",
    }
    c = load_config(cfg, env=env)
    assert c.embedder == "local" and c.max_content_chars == 100
    assert c.arango.database == "fromyaml" and c.arango.url == "http://h:1"
    c2 = load_config(cfg, env=env, embedder="hashing")
    assert c2.embedder == "hashing"
    assert "secret" not in repr(load_config(env={"ARANGO_PASSWORD": "secret"}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("backend: mongo\n", "invalid configuration"),
        ("- a\n- b\n", "mapping"),
        ("a: [\n", "not valid YAML"),
        ("unknown_key: 1\n", "invalid configuration"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ValidationError, match=message):
        load_config(cfg, env={})
    with pytest.raises(ValidationError, match="does not exist"):
        load_config(tmp_path / "missing.yaml", env={})


def test_content_limit_is_configurable(tmp_path: Path) -> None:
    cfg = load_config(env={}, path=str(tmp_path / "m.db"), max_content_chars=10)
    with AgentMemory(config=cfg, embedder=HashingEmbedder(16)) as mem:
        with pytest.raises(ValidationError, match="limit of 10"):
            mem.add("x" * 11)
        assert mem.add("x" * 10).content == "x" * 10


def test_agent_memory_is_exported_from_the_package_without_a_heavy_import() -> None:
    """``from attestor_arango import AgentMemory`` works; a bare import loads no store."""
    import subprocess
    import sys

    code = (
        "import sys, attestor_arango\n"
        "assert 'attestor_arango.memory' not in sys.modules\n"
        "from attestor_arango import AgentMemory\n"
        "from attestor_arango.memory import AgentMemory as Direct\n"
        "assert AgentMemory is Direct\n"
        "try:\n"
        "    attestor_arango.NoSuchThing\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchThing' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
