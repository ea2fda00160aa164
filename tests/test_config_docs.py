"""Configuration a user can find: the generated docs match the model, the platform config
file is found, errors name keys (not pydantic), tracing on picks a path, retention hints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from interface_support import PYTHON, ROOT, cli_env

from attestor_arango.config import _ENV, ENV_NAMES, Config
from attestor_arango.interfaces.cli.config_docs import render
from tests.support.trace_reading import trace_text

CLI = [PYTHON, "-m", "attestor_arango.interfaces.cli.main"]
DOC = ROOT / "docs" / "configuration.md"


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=cli_env(home, **env), capture_output=True, text=True, timeout=120
    )


def test_docs_configuration_is_generated_from_the_model() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is stale: python -m attestor_arango.interfaces.cli.config_docs "
        "> docs/configuration.md"
    )
    text = DOC.read_text(encoding="utf-8")
    for name in _ENV:
        assert f"`{name}`" in text
    for name in ENV_NAMES:  # every variable config.py reads is documented
        assert name in text, name
    for key in Config.model_fields:
        assert f"| `{key}` |" in text
    assert "older_than" in text and "## Retention" in text


def test_the_platform_config_file_is_found_without_flags(tmp_path: Path) -> None:
    config_dir = tmp_path / "cfg" / "attestor-arango"
    config_dir.mkdir(parents=True)
    (config_dir / "config.yaml").write_text(
        yaml.safe_dump({"path": str(tmp_path / "from-config.db")}), encoding="utf-8"
    )
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert run(tmp_path, "add", "found the config", **env).returncode == 0
    assert (tmp_path / "from-config.db").is_file()
    assert not (tmp_path / "memory.db").exists()  # ATTESTOR_PATH lost to the file


def test_config_errors_name_the_key_without_pydantic_text(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("embeder: local\narango: {vector_min_docs: many}\n", encoding="utf-8")
    done = run(tmp_path, "stats", "--config", str(bad))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert "unknown key 'embeder'; did you mean 'embedder'?" in message
    assert "arango.vector_min_docs" in message and "docs/configuration.md" in message
    assert "pydantic" not in message.lower() and "http" not in message
    env_bad = run(tmp_path, "stats", ATTESTOR_CACHE_ROWS="-5")
    assert env_bad.returncode == 2 and "cache_rows" in env_bad.stderr
    assert "pydantic" not in env_bad.stderr.lower()


def test_trace_on_without_a_path_writes_beside_the_data(tmp_path: Path) -> None:
    assert run(tmp_path, "add", "Ana lives in Porto", ATTESTOR_TRACE="1").returncode == 0
    done = run(tmp_path, "recall", "where does Ana live", ATTESTOR_TRACE="1")
    assert done.returncode == 0, done.stderr
    trace = tmp_path / "xdg" / "attestor-arango" / "recall-trace.jsonl"
    lines = trace_text(trace).splitlines()
    assert lines and json.loads(lines[-1])


def test_retention_without_policies_says_where_they_go(tmp_path: Path) -> None:
    done = run(tmp_path, "retention", "--dry-run")
    assert done.returncode == 0
    assert "docs/configuration.md#retention" in " ".join(done.stderr.split())
