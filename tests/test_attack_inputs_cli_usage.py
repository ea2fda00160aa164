"""Adversarial finding: with ``--json`` the CLI still answered a bad command line in text.

argparse printed its usage and ``error: ...`` and exited 2, so a script that asked for
JSON and parses stderr as the CLI's other errors (``{"error": {code, message,
details}}``) got text it cannot read. A refused command line is now reported like every
other error: a JSON object on stderr with ``--json`` (exit 2, nothing on stdout),
argparse's usage and message without it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from interface_support import PYTHON, cli_env

from attestor_arango.interfaces.cli.main import main

LINES = {
    "unknown command": (["--json", "nosuch"], "invalid choice"),
    "a word for an integer": (["list", "--limit", "x", "--json"], "--limit"),
    "an unknown option": (["list", "--jsonx", "--json"], "unrecognized arguments"),
    "a missing argument": (["add", "--json"], "content"),
    "a port out of range": (["api", "--port", "99999", "--json"], "--port"),
    "an abbreviated --json": (["list", "--limit", "x", "--jso"], "--limit"),
    "a bad choice": (["list", "--status", "gone", "--json"], "--status"),
}


@pytest.mark.parametrize("case", list(LINES))
def test_a_bad_command_line_with_json_is_a_json_error(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, named = LINES[case]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = json.loads(captured.err)["error"]
    assert error["code"] == "invalid_input"
    assert named in error["message"]
    assert error["details"]["usage"].startswith("usage: attestor-arango")


def test_without_json_the_usage_is_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--limit", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: attestor-arango list")
    assert "attestor-arango list: error: argument --limit: 'x' is not a whole number" in err
    assert main(["list", "--limit", "x", "--", "--json"]) == 2  # after --, not an option
    assert capsys.readouterr().err.startswith("usage:")


def test_the_installed_command_answers_json_too(tmp_path: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", "search", "--limit", "-", "--json"],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert json.loads(done.stderr)["error"]["code"] == "invalid_input"
