"""Bad files and bad flags given to the CLI (and the library under it) end in a typed error
and an exit code with a message, never a traceback, and change nothing stored.

Found by the session 14 red team: a store path that is a file of another kind, a config,
key, import or policy file that is not UTF-8, an ``export -o`` into a missing folder (which
logged an export that never reached the caller), server numbers out of range, and
``--log-level trace`` (which uvicorn offers and the package's log setup did not know).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from interface_support import run_cli as cli

from attestor_arango.config import load_config
from attestor_arango.errors import StoreError, ValidationError
from attestor_arango.interfaces.api.auth import load_keys
from attestor_arango.interfaces.api.logs import configure
from attestor_arango.interfaces.cli.main import build_parser, main
from attestor_arango.interfaces.cli.parsing import UsageError
from attestor_arango.memory import AgentMemory

NOT_UTF8 = b"\xff\xfe\x00 not text"


def audit_actions(home: Path) -> list[str]:
    done = cli(home, "audit", "--json")
    assert done.returncode == 0, done.stderr
    return [entry["action"] for entry in json.loads(done.stdout)]


@pytest.mark.parametrize("kind", ["not a database", "a file where a folder goes"])
def test_a_store_path_of_another_kind_is_a_store_error_and_stays_as_it_was(
    tmp_path: Path, kind: str
) -> None:
    other = tmp_path / ("junk.db" if kind == "not a database" else "notes.txt")
    other.write_bytes(NOT_UTF8 * 200)
    with pytest.raises(StoreError, match="cannot open the embedded store") as caught:
        AgentMemory(other)
    assert str(other) in str(caught.value)
    assert other.read_bytes() == NOT_UTF8 * 200


def test_a_config_or_key_file_that_is_not_text_is_a_validation_error(tmp_path: Path) -> None:
    bad = tmp_path / "settings.yaml"
    bad.write_bytes(NOT_UTF8)
    with pytest.raises(ValidationError, match=r"config file .* is not UTF-8 text"):
        load_config(bad, env={})
    with pytest.raises(ValidationError, match=r"API key file .* is not UTF-8 text"):
        load_keys(bad, env={})


@pytest.mark.parametrize(
    "args",
    [
        ("--config", "bad.bin", "list"),
        ("import", "bad.bin"),
        ("retention", "--policies", "bad.bin", "--dry-run"),
        ("api", "--keys", "bad.bin"),
        ("import", "folder"),
        ("export", "-o", "missing/out.json"),
        ("export", "-o", "folder"),
    ],
)
def test_cli_refuses_a_bad_file_with_exit_2_and_changes_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    (tmp_path / "bad.bin").write_bytes(NOT_UTF8)
    (tmp_path / "folder").mkdir()
    assert cli(tmp_path, "add", "a fact to keep").returncode == 0
    before = audit_actions(tmp_path)
    done = cli(tmp_path, "--json", *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stderr)["error"]["code"] == "invalid_input"
    assert audit_actions(tmp_path) == before == ["add"]  # no export logged, nothing imported
    assert not (tmp_path / "missing").exists()


def test_cli_names_a_store_path_of_another_kind_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_bytes(NOT_UTF8 * 200)
    done = cli(tmp_path, "--json", "list", "--path", "junk.db")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert json.loads(done.stderr)["error"]["code"] == "store_error"


@pytest.mark.parametrize(
    "argv",
    [
        ["api", "--no-auth", "--port", "99999"],
        ["api", "--no-auth", "--port", "-1"],
        ["api", "--no-auth", "--workers", "0"],
        ["api", "--no-auth", "--max-body", "-1"],
        ["api", "--no-auth", "--timeout", "nan"],
        ["api", "--no-auth", "--timeout", "0"],
        ["api", "--no-auth", "--max-connections", "0"],
        ["api", "--no-auth", "--grace", "-5"],
        ["api", "--no-auth", "--log-level", "loud"],
        ["mcp", "--transport", "http", "--port", "70000"],
        ["mcp", "--log-level", "loud"],
        ["ui", "--port", "65536"],
        ["ui", "--log-level", "loud"],
    ],
)
def test_server_numbers_and_levels_out_of_range_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError) as refused:  # main() prints it and exits 2
        build_parser().parse_args(argv)
    assert f"argument {argv[-2]}" in refused.value.message
    assert main(argv) == 2
    assert f"argument {argv[-2]}" in capsys.readouterr().err


def test_server_numbers_in_range_are_read() -> None:
    args = build_parser().parse_args(
        ["api", "--port", "0", "--workers", "2", "--timeout", "1.5", "--log-level", "TRACE"]
    )
    assert (args.port, args.workers, args.timeout, args.log_level) == (0, 2, 1.5, "trace")


@pytest.fixture
def package_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("attestor_arango")
    kept = (list(logger.handlers), logger.level, logger.propagate)
    yield logger
    logger.handlers[:], logger.level, logger.propagate = kept[0], kept[1], kept[2]


def test_log_level_trace_is_below_debug(package_logger: logging.Logger) -> None:
    configure("text", "trace")
    assert 0 < package_logger.level < logging.DEBUG
